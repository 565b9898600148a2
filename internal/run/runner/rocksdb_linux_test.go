package runner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/record"
)

// TestMyRocksPlan runs a version with engine = "rocksdb" on the installed
// MariaDB with its MyRocks plugin: a write step, the post-write flush
// (RocksDB's: memtables flushed, compacted) and a read step. Every Record
// says its tables were in ROCKSDB (read from information_schema) and splits
// the server's counters into MyRocks' roles beside the others: a role row
// for the flush pool, the compaction pool and MyRocks' own threads, with
// their threads counted and their task-clock measured (zero when they were
// idle). A running server without the plugin is refused with the package
// to install.
func TestMyRocksPlan(t *testing.T) {
	needTools(t)
	testdb.NeedRocksDB(t)
	p := parsePlan(t, `
[run]
compare = "windows"
warmup = "1s"
duration = "3s"
events = ["task-clock", "context-switches"]
[data]
tables = 2
table_size = 2000
[steps]
list = ["update-nonindex", "point-query"]
[[version]]
label = "rocks"
basedir = "installed"
engine = "rocksdb"
options = ["innodb_buffer_pool_size=64M"]
`)
	_, said, sum, recs := runOK(t, p)
	for _, id := range []string{"rocks/update-nonindex_range=100/t1/r1", "rocks/point-query_range=100/t1/r1"} {
		r := recs[id]
		if r == nil {
			t.Errorf("no Record of %s", id)
			continue
		}
		checkMeasured(t, id, r)
		if r.Server == nil || r.Server.Engine != "ROCKSDB" {
			t.Errorf("%s: server %+v, want its tables' engine ROCKSDB", id, r.Server)
		}
		for _, name := range []string{"rocksdb-flush", "rocksdb-compaction", "myrocks-background"} {
			i := slices.IndexFunc(r.Roles, func(role record.Role) bool { return role.Name == name })
			if i < 0 {
				t.Errorf("%s: no %s role in %+v", id, name, r.Roles)
				continue
			}
			role := r.Roles[i]
			tc := slices.IndexFunc(role.Counters, func(c record.Counter) bool { return c.Event == "task-clock" })
			if role.Threads < 1 || tc < 0 || !role.Counters[tc].Measured() || role.Counters[tc].Value < 0 {
				t.Errorf("%s: role %s has %d threads and counters %+v; want a thread or more and a measured task-clock", id, name, role.Threads, role.Counters)
				continue
			}
			t.Logf("%s: %s: %d threads, task-clock %.0f", id, name, role.Threads, role.Counters[tc].Value)
		}
		for _, w := range r.Warnings {
			if strings.Contains(w.Text, "post-write flush") || strings.Contains(w.Text, "dirty pages") {
				t.Errorf("%s: flush warning %q", id, w.Text)
			}
		}
	}
	if sum.OK+sum.Partial != 2 || sum.Partial != cpuGapPartials(recs) || !strings.Contains(said, "rocks: post-write flush done") {
		t.Errorf("summary %+v; the post-write flush before point-query must run", sum)
	}
	noServerLeft(t, serverPids(recs)...)

	// A running server without MyRocks: refused, with what to install.
	srv := testdb.New(t, testdb.Options{})
	bad := parsePlan(t, `
[run]
warmup = "1s"
duration = "2s"
events = ["task-clock"]
[data]
load = false
[steps]
list = ["point-query"]
[[version]]
label = "inno"
socket = "`+srv.Socket+`"
user = "root"
engine = "rocksdb"
`)
	var said2 syncBuffer
	_, err := Run(context.Background(), bad, testOptions(t.TempDir(), &said2))
	t.Logf("without MyRocks:\n%s", said2.String())
	want := `version inno (line 10 of the plan) has engine = "rocksdb": storage engine not available: the server has no ROCKSDB engine: install MyRocks (apt-get install mariadb-plugin-rocksdb)`
	if !errors.Is(err, ErrStepsFailed) || !strings.Contains(said2.String(), want) {
		t.Errorf("run on a server without MyRocks: %v; want:\n%s", err, want)
	}
}
