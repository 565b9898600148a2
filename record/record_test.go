package record

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sample() *Record {
	r := New(KindStep)
	r.Host, r.Version, r.Step, r.Threads, r.Repeat = "h1", "ma10.11.6", "point-query_range=100", 2, 1
	r.Window = Window{Start: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 30, 10, 0, 10, 0, time.UTC), Seconds: 10}
	r.Ops = Ops{Source: "Questions", Count: 200000, Per: 1}
	r.Counters = []Counter{
		{Event: "task-clock", Raw: 9_000_000_000, Enabled: 10_000_000_000, Running: 10_000_000_000, Value: 9e9, Status: StatusCounted},
		{Event: "cycles", Status: StatusNotSupported, Reason: "no hardware PMU"},
		{Event: "cache-misses", Raw: 500, Enabled: 1000, Running: 250, Value: 2000, Status: StatusScaled},
	}
	return r
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := sample()
	path := filepath.Join(dir, "sub", FileName(r))
	if err := Write(path, r); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Step != r.Step || len(got.Counters) != 3 || got.Counters[2].Running != 250 || !got.Window.End.Equal(r.Window.End) {
		t.Errorf("round trip changed the record: %+v", got)
	}
	// No temporary file is left behind.
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("folder has %d entries, want only the record", len(ents))
	}
	// Marshal is deterministic.
	a, _ := Marshal(r)
	b, _ := Marshal(got)
	if string(a) != string(b) {
		t.Error("marshal of a round-tripped record differs")
	}
}

func TestFileName(t *testing.T) {
	r := sample()
	r.Version = "my 8.0/39"
	if got, want := FileName(r), "my_8.0_39__point-query_range=100__t2__r1.json"; got != want {
		t.Errorf("FileName = %q, want %q", got, want)
	}
}

func TestCounterFraction(t *testing.T) {
	c := sample().Counters
	if f := c[2].RunningFraction(); f != 0.25 {
		t.Errorf("running fraction = %v, want 0.25", f)
	}
	if c[1].Measured() || !c[0].Measured() || !c[2].Measured() {
		t.Error("Measured disagrees with status")
	}
	if (Counter{}).RunningFraction() != 0 {
		t.Error("zero enabled time must give fraction 0")
	}
}

func TestValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		json string
		want string
	}{
		"not a record": {`{"foo":1}`, "not a perfbench record"},
		"newer schema": {`{"schema":99,"version":"a","step":"s","outcome":"ok"}`, "upgrade perfbench"},
		"no version":   {`{"schema":1,"step":"s","outcome":"ok"}`, "no version"},
		"bad outcome":  {`{"schema":1,"version":"a","step":"s","outcome":"meh"}`, "unknown outcome"},
		"bad status":   {`{"schema":1,"version":"a","step":"s","outcome":"ok","counters":[{"event":"x","status":"zero"}]}`, "unknown status"},
		"truncated":    {`{"schema":1,"version":"a"`, "decode record"},
		"neg schema":   {`{"schema":-1,"version":"a","step":"s","outcome":"ok"}`, "schema -1 is not a schema version"},
		"neg threads":  {`{"schema":1,"version":"a","step":"s","threads":-4,"outcome":"ok"}`, "negative thread count (-4)"},
		"neg repeat":   {`{"schema":1,"version":"a","step":"s","repeat":-1,"outcome":"ok"}`, "negative repeat number (-1)"},
	} {
		_, err := Parse([]byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	r1, r2 := sample(), sample()
	r2.Version = "ma10.11.9"
	for _, r := range []*Record{r2, r1} {
		if err := Write(filepath.Join(dir, FileName(r)), r); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "plan.json"), []byte(`{"steps":[]}`), 0o644)
	os.WriteFile(filepath.Join(dir, ".hidden.json"), []byte(`garbage`), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(`x`), 0o644)

	recs, problems, err := Load([]string{dir}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Record.Version != "ma10.11.6" || recs[1].Record.Version != "ma10.11.9" {
		t.Fatalf("loaded %d records in wrong order or wrong ones", len(recs))
	}
	if len(problems) != 1 || !errors.Is(problems[0], ErrNotRecord) {
		t.Errorf("problems = %v, want the plan file reported as not a record", problems)
	}
	// A non-record named explicitly is an error.
	if _, _, err := Load([]string{filepath.Join(dir, "plan.json")}, false); !errors.Is(err, ErrNotRecord) {
		t.Errorf("explicit non-record: err = %v", err)
	}
	// A broken record inside a folder is an error unless lenient.
	os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"schema":1,"version":"a"`), 0o644)
	if _, _, err := Load([]string{dir}, false); err == nil || !strings.Contains(err.Error(), "broken.json") {
		t.Errorf("broken record: err = %v, want one naming the file", err)
	}
	recs, problems, err = Load([]string{dir}, true)
	if err != nil || len(recs) != 2 || len(problems) != 2 {
		t.Errorf("lenient: %d records, %d problems, err %v", len(recs), len(problems), err)
	}
}

// TestWriteVerifies: a file that reads back other than written (a
// filesystem that loses data without an error) fails the write, so that a
// caller never counts it as saved; a folder in the way fails it too, and an
// earlier Record at the path survives a failed write.
func TestWriteVerifies(t *testing.T) {
	dir := t.TempDir()
	r := sample()
	path := filepath.Join(dir, FileName(r))
	if err := Write(path, r); err != nil {
		t.Fatal(err)
	}
	defer func() { readBack = os.ReadFile }()
	readBack = func(p string) ([]byte, error) {
		b, err := os.ReadFile(p)
		return b[:len(b)/2], err
	}
	r.Repeat = 2
	err := Write(path, r)
	if !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), path) {
		t.Errorf("a short read-back: %v, want ErrVerify naming %s", err, path)
	}
	readBack = os.ReadFile

	// The rename cannot replace a folder: nothing is written, no
	// temporary file is left.
	sub := filepath.Join(dir, "sub.json")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(sub, r); err == nil {
		t.Errorf("writing over a folder succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("folder has %d entries after the failed writes, want the Record and sub.json", len(ents))
	}
}
