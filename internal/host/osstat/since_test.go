package osstat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A reading Since an earlier one takes from it the threads that did not
// run (they changed nothing /proc shows) and reads the others: here the
// fixture's thread 12125 did not run and 12127 did; both files changed
// after the first reading, 13645 exited and 14000 started.
func TestReadProcessSince(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata")); err != nil {
		t.Fatal(err)
	}
	fs := FS{Root: root}
	prev, err := fs.ReadProcess(12122)
	if err != nil {
		t.Fatal(err)
	}
	task := filepath.Join(root, "proc/12122/task")
	for _, tid := range []string{"12125", "12127"} {
		b, err := os.ReadFile(filepath.Join(task, tid, "status"))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), "voluntary_ctxt_switches:\t", "voluntary_ctxt_switches:\t9", 1)
		if err := os.WriteFile(filepath.Join(task, tid, "status"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(task, "13645")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(task, "14000"), os.DirFS(filepath.Join(task, "12127"))); err != nil {
		t.Fatal(err)
	}
	asked := map[int]uint64{}
	ran := func(tid int, start uint64) bool {
		asked[tid] = start
		return tid != 12125 && tid != 13645
	}
	p, err := fs.Since(prev, ran).ReadProcess(12122)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]uint64{}
	for _, th := range p.Threads {
		got[th.TID] = th.Voluntary
	}
	// 12125 keeps 641 though its file now says 9641; 12127 is read
	// again (910, was 10); 14000 is read; 13645 is gone.
	if got[12125] != 641 || got[12127] != 910 || got[14000] != 910 || len(got) != 11 {
		t.Errorf("voluntary switches by thread: %v", got)
	}
	if _, ok := got[13645]; ok {
		t.Error("an exited thread was kept")
	}
	if p.Kept != 1 {
		t.Errorf("kept %d threads, want 1", p.Kept)
	}
	if asked[12125] != 57681 {
		t.Errorf("ran was asked about 12125 with start %d, want its stat's 57681", asked[12125])
	}
	if _, ok := asked[14000]; ok {
		t.Error("ran was asked about a thread the earlier reading did not have")
	}
	// Without an earlier reading, every thread is read.
	p, err = fs.Since(nil, ran).ReadProcess(12122)
	if err != nil || p.Kept != 0 {
		t.Errorf("since nothing: kept %d, %v", p.Kept, err)
	}
}
