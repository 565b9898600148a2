package report

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/perfbench/perfbench/internal/report/internal/campaign"
	"github.com/perfbench/perfbench/record"
)

// campaignDir writes the full generated campaign (8,400 Records, 314 MB)
// once per test binary, into campaignPath, or reads the one that
// PERFBENCH_CAMPAIGN names (as gencampaign writes it), kept.
var campaignDir = sync.OnceValues(func() (string, error) {
	if dir := os.Getenv("PERFBENCH_CAMPAIGN"); dir != "" {
		return dir, nil
	}
	dir, err := os.MkdirTemp("", "perfbench-campaign")
	if err != nil {
		return "", err
	}
	campaignPath = dir
	_, _, err = campaign.Write(campaign.Full, dir)
	return dir, err
})

var campaignPath string

// TestMain removes the campaign after the benchmarks that wrote it.
func TestMain(m *testing.M) {
	code := m.Run()
	if campaignPath != "" {
		os.RemoveAll(campaignPath)
	}
	os.Exit(code)
}

func benchCampaign(b *testing.B) string {
	b.Helper()
	dir, err := campaignDir()
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkCampaignLoad reads the 8,400 Records of a generated campaign:
// floor reads every file's bytes and nothing more; text reads the Records
// for every table (perfbench report --format text); summary for the
// tables that need neither the roles nor the series (--tables summary
// among them); charts for every table and the per-second charts.
// go test -run '^$' -bench Campaign ./internal/report
func BenchmarkCampaignLoad(b *testing.B) {
	dir := benchCampaign(b)
	var files []string
	var size int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if fi, err := d.Info(); err == nil && !d.IsDir() {
			files = append(files, p)
			size += fi.Size()
		}
		return nil
	})
	b.Run("floor", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for _, f := range files {
				if _, err := os.ReadFile(f); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	for _, c := range []struct {
		name string
		f    fields
	}{{"text", fields{Roles: true}}, {"summary", fields{}}, {"charts", allFields}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				in, err := LoadInputWith([]string{dir}, c.f)
				if err != nil {
					b.Fatal(err)
				}
				if len(in.Records) != campaign.Full.Count() {
					b.Fatalf("%d Records loaded, want %d", len(in.Records), campaign.Full.Count())
				}
			}
		})
	}
}

// loadCampaignAsCLI reads the campaign's Records as perfbench report
// --format text does: every table's parts, not the charts' series.
func loadCampaignAsCLI(b *testing.B) *Input {
	b.Helper()
	in, err := LoadInputWith([]string{benchCampaign(b)}, FieldsFor(Options{}, false))
	if err != nil {
		b.Fatal(err)
	}
	return in
}

// BenchmarkCampaignTable renders each table of the campaign's report as
// text, from Records already loaded (as the text report loads them).
func BenchmarkCampaignTable(b *testing.B) {
	in := loadCampaignAsCLI(b)
	for _, id := range TableIDs {
		b.Run(id, func(b *testing.B) {
			for b.Loop() {
				if err := Write(io.Discard, "text", in.Records, nil, Options{Tables: []string{id}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCampaignReport renders the campaign's whole report (every
// table) as text, from Records already loaded (as the text report loads
// them).
func BenchmarkCampaignReport(b *testing.B) {
	in := loadCampaignAsCLI(b)
	for b.Loop() {
		if err := Write(io.Discard, "text", in.Records, nil, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLoadLean checks that Records read without the parts a report does
// not need equal those record.Load reads whole but for those parts: old
// Records (testdata/records) and a small generated campaign.
func TestLoadLean(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := campaign.Write(campaign.Spec{Steps: 3, Versions: 2, Hosts: 2, Repeats: 2, Seconds: 5, Seed: 3}, dir); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"../../testdata/records", dir} {
		whole, _, err := record.Load([]string{in}, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []fields{{}, {Roles: true}, allFields} {
			lean, problems, err := loadRecords(in, f)
			if err != nil || len(problems) > 0 {
				t.Fatalf("%s: %v %v", in, err, problems)
			}
			if len(lean) != len(whole) {
				t.Fatalf("%s: %d Records read lean, %d whole", in, len(lean), len(whole))
			}
			roles, series := 0, 0
			for i, l := range lean {
				w := *whole[i].Record
				roles += len(l.Record.Roles)
				series += len(l.Record.Series)
				if l.Path != whole[i].Path {
					t.Fatalf("Record %d: %s read lean, %s whole", i, l.Path, whole[i].Path)
				}
				if !w.Window.Start.IsZero() {
					if !f.Roles {
						w.Roles = nil
					}
					if !f.Series {
						w.Series = nil
					}
					if w.Client != nil {
						c := *w.Client
						c.Intervals, c.Histogram, c.Command = nil, nil, nil
						w.Client = &c
					}
					// What no report reads (record.Select.Extras).
					w.Gauges = nil
					if w.Server != nil {
						w.Server = &record.Server{Version: w.Server.Version}
					}
					w.Provenance = record.Provenance{Hostname: w.Provenance.Hostname, CPUModel: w.Provenance.CPUModel, CPUs: w.Provenance.CPUs}
					var st map[string]float64
					for _, k := range []string{"Rows_read", "Innodb_rows_read"} {
						if v, ok := w.Status[k]; ok {
							if st == nil {
								st = map[string]float64{}
							}
							st[k] = v
						}
					}
					if w.Status != nil && st == nil {
						st = map[string]float64{}
					}
					w.Status = st
				}
				if !reflect.DeepEqual(l.Record, &w) {
					t.Errorf("%s with %+v: read lean\n%+v\nwant\n%+v", l.Path, f, l.Record, &w)
				}
			}
			if f.Roles != (roles > 0) || f.Series != (series > 0) {
				t.Errorf("%s with %+v: %d roles and %d series points read", in, f, roles, series)
			}
		}
	}
}

// TestLoadMemoryLinear checks that the memory Records hold once loaded
// grows in proportion to their number, and is a fraction of the files'
// bytes: loading keeps neither the bytes of every file nor the parts of
// a Record no table reads. (Heap in use after a collection, not time.)
func TestLoadMemoryLinear(t *testing.T) {
	held := func(hosts int) (heap uint64, raw int64) {
		dir := t.TempDir()
		_, raw, err := campaign.Write(campaign.Spec{Steps: 6, Versions: 2, Hosts: hosts, Repeats: 5, Seconds: 60, Seed: 5}, dir)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		in, err := LoadInputWith([]string{dir}, fields{Roles: true})
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if want := 6 * 2 * hosts * 5; len(in.Records) != want {
			t.Fatalf("%d Records loaded, want %d", len(in.Records), want)
		}
		runtime.KeepAlive(in)
		return after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc), raw
	}
	h1, raw1 := held(2)
	h2, raw2 := held(4)
	t.Logf("120 Records: %d KB held of %d KB of files; 240: %d KB of %d KB", h1>>10, raw1>>10, h2>>10, raw2>>10)
	if r := float64(h2) / float64(h1); r < 1.6 || r > 2.4 {
		t.Errorf("twice the Records hold %.2f× the memory, want about 2×", r)
	}
	if float64(h2) > 0.5*float64(raw2) {
		t.Errorf("240 Records hold %d KB, more than half their files' %d KB", h2>>10, raw2>>10)
	}
}

// TestReaderFirstBytes checks that a Record read from its first bytes
// (the rest of the file only when they do not hold all that is read)
// equals the Record read from the whole file, whatever the number of
// first bytes tried, for Records written now and older ones.
func TestReaderFirstBytes(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := campaign.Write(campaign.Spec{Steps: 2, Versions: 2, Hosts: 1, Repeats: 2, Seconds: 120, Seed: 4}, dir); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, in := range []string{"../../testdata/records", dir} {
		fs, err := record.Files(in)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	for _, f := range []fields{{}, {Roles: true}, allFields} {
		stopped := 0
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErr := record.NewSelective(f.selection()).Parse(data)
			if wantErr == nil && want.Window.Start.IsZero() {
				want, wantErr = record.Parse(data)
			}
			for _, first := range []int{1, 100, 5000, 13000, 21000, 30000, 1e6} {
				rd := reader{sel: record.NewSelective(f.selection()), first: first}
				got, err := rd.read(path)
				if (err == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
					t.Fatalf("%s with %+v from its first %d bytes: %v\n%+v\nwant %v\n%+v", path, f, first, err, got, wantErr, want)
				}
				// The first bytes sufficed when the next file is
				// to be read from as many as were needed, rounded up
				// to 4 KiB (none of the sizes tried, nor twice one).
				if rd.first%(4<<10) == 0 {
					stopped++
				}
			}
		}
		// A Record's members may come in any order: its first bytes
		// never suffice.
		if stopped > 0 {
			t.Errorf("%+v: the first bytes sufficed %d times", f, stopped)
		}
	}
}

// TestReaderCutShort: a Record cut short in its bulky members is an
// error naming its file, whichever members are read.
func TestReaderCutShort(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := campaign.Write(campaign.Spec{Steps: 1, Versions: 1, Hosts: 1, Repeats: 1, Seconds: 120, Seed: 5}, dir); err != nil {
		t.Fatal(err)
	}
	files, err := record.Files(dir)
	if err != nil || len(files) == 0 {
		t.Fatalf("campaign files %v: %v", files, err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.TrimRight(data, "\n")
	for _, keep := range []int{len(data) - 1, len(data) - 10, len(data) * 3 / 4} {
		// Cut where the JSON does not happen to end with a brace: the
		// check reads the file's last bytes only (see endsWhole).
		for data[keep-1] == '}' {
			keep--
		}
		path := filepath.Join(t.TempDir(), "cut.json")
		if err := os.WriteFile(path, data[:keep], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := record.Parse(data[:keep]); err == nil {
			t.Fatalf("the Record cut to %d of %d bytes parses whole", keep, len(data))
		}
		rd := reader{sel: record.NewSelective(fields{}.selection()), first: 4 << 10}
		r, err := rd.read(path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("cut to %d of %d bytes: Record %v, error %v; want an error naming the file", keep, len(data), r != nil, err)
		}
	}
	// Whole, with a newline after it, it reads.
	path := filepath.Join(t.TempDir(), "whole.json")
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	rd := reader{sel: record.NewSelective(fields{}.selection()), first: 4 << 10}
	if _, err := rd.read(path); err != nil {
		t.Errorf("whole: %v", err)
	}
}
