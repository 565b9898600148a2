package remote

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeReceive runs the watcher and the receiver over a pipe: files
// come while the watch runs, again when they change, dot files never.
func TestServeReceive(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("records/a.json", "A")
	write("records/.replaced/old.json", "OLD")
	write("records/.b.json.tmp", "partial")

	stdinR, stdinW := io.Pipe()
	streamR, streamW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := Serve(context.Background(), src, stdinR, streamW, 20*time.Millisecond, 0)
		streamW.CloseWithError(err)
		served <- err
	}()
	got := make(chan string, 100)
	received := make(chan error, 1)
	go func() { received <- receive(streamR, dst, func(rel string) { got <- rel }) }()

	// arrived counts the arrivals of each file not yet waited for.
	arrived := map[string]int{}
	wait := func(want string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for arrived[want] == 0 {
			select {
			case rel := <-got:
				arrived[rel]++
			case <-deadline:
				t.Fatalf("%s did not come", want)
			}
		}
		arrived[want]--
	}
	wait("records/a.json")
	wait("records/.replaced/old.json")

	// a.json changed: sent again.
	write("records/a.json", "A2")
	wait("records/a.json")
	stdinW.Close() // the end: what is left comes, stable or not
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if err := <-received; err != nil {
		t.Fatal(err)
	}
	close(got)
	for rel := range got {
		if strings.HasPrefix(filepath.Base(rel), ".") {
			t.Errorf("sent %s", rel)
		}
	}
	for rel, want := range map[string]string{"records/a.json": "A2", "records/.replaced/old.json": "OLD"} {
		if b, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", rel, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "records", ".b.json.tmp")); err == nil {
		t.Error("a dot file was pulled")
	}
}

// TestSweep: a file is sent once two scans found it unchanged, or at the
// last scan whatever its state.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	w := &watcher{dir: dir, tw: tar.NewWriter(&out), sent: map[string]fileState{}, seen: map[string]fileState{}}
	path := filepath.Join(dir, "log.txt")
	sent := func(final bool) []string {
		t.Helper()
		out.Reset()
		if err := w.sweep(final); err != nil {
			t.Fatal(err)
		}
		var names []string
		tr := tar.NewReader(&out)
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(tr)
			names = append(names, h.Name+"="+string(b))
		}
		return names
	}
	appendLine := func(s string) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	appendLine("1\n")
	if got := sent(false); got != nil {
		t.Errorf("first scan sent %q, want nothing (not yet stable)", got)
	}
	appendLine("2\n")
	if got := sent(false); got != nil {
		t.Errorf("scan after a change sent %q, want nothing", got)
	}
	if got := sent(false); len(got) != 1 || got[0] != "log.txt=1\n2\n" {
		t.Errorf("scan of a stable file sent %q", got)
	}
	if got := sent(false); got != nil {
		t.Errorf("scan of an unchanged file sent it again: %q", got)
	}
	appendLine("3\n")
	if got := sent(true); len(got) != 1 || got[0] != "log.txt=1\n2\n3\n" {
		t.Errorf("last scan sent %q, want the changed file", got)
	}
}

func TestServeMissingFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not-yet")
	var out bytes.Buffer
	if err := Serve(context.Background(), dir, strings.NewReader(""), &out, time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	if n, err := tar.NewReader(&out).Next(); err != io.EOF {
		t.Errorf("stream of a missing folder: %v, %v; want an empty one", n, err)
	}
}

func TestReceiveRefusesEscapes(t *testing.T) {
	for _, h := range []*tar.Header{
		{Name: "../outside.json", Typeflag: tar.TypeReg, Size: 1},
		{Name: "/etc/passwd", Typeflag: tar.TypeReg, Size: 1},
		{Name: "records/link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
	} {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		tw.WriteHeader(h)
		if h.Size > 0 {
			tw.Write([]byte("x"))
		}
		tw.Close()
		dir := t.TempDir()
		err := receive(&b, filepath.Join(dir, "in"), nil)
		if err == nil || !strings.Contains(err.Error(), "not a plain file inside the folder") {
			t.Errorf("%s: got %v", h.Name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "outside.json")); err == nil {
			t.Errorf("%s was written outside the folder", h.Name)
		}
	}
}

// TestSessionWriter: the session's announcement is taken out of stderr
// wherever it comes (after a login shell's noise, split across writes) and
// only once; everything else passes, in order.
func TestSessionWriter(t *testing.T) {
	var out bytes.Buffer
	s := &sessionWriter{w: &out, sid: make(chan int, 1)}
	for _, p := range []string{"bashrc: warning\n", "perfbench-sess", "ion:4242\nfirst", " line\n", "perfbench-session:7\n", "no newline"} {
		if n, err := s.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	s.Flush()
	if sid := <-s.sid; sid != 4242 {
		t.Errorf("session %d, want 4242", sid)
	}
	want := "bashrc: warning\nfirst line\nperfbench-session:7\nno newline"
	if out.String() != want || s.tail.String() != want {
		t.Errorf("passed %q, kept %q; want %q", out.String(), s.tail.String(), want)
	}
}
