package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/load/suite"
)

// TestEngine: engine = "rocksdb" makes a managed server load MyRocks with
// RocksDB the default engine (before the plan's options, which may
// override them), and every sysbench command line of the version create
// and use RocksDB tables, before extra_args; an InnoDB version of the same
// build is another server, not its A/A pair; a running server keeps the
// engine; an unknown engine is refused with the line.
func TestEngine(t *testing.T) {
	p := mustParse(t, `
[data]
extra_args = ["--mysql-ignore-errors=all"]
[steps]
list = ["point-query"]
[[version]]
label = "inno"
basedir = "installed"
[[version]]
label = "rocks"
basedir = "installed"
engine = "RocksDB"
options = ["rocksdb_block_cache_size=64M"]
[[version]]
label = "running"
socket = "/run/mysqld/mysqld.sock"
engine = "innodb"
`)
	if len(p.Versions) != 3 {
		t.Fatalf("%d versions, want 3", len(p.Versions))
	}
	inno, rocks, running := p.Versions[0], p.Versions[1], p.Versions[2]
	if inno.Engine != "" || rocks.Engine != suite.EngineRocksDB || running.Engine != suite.EngineInnoDB {
		t.Errorf("engines %q %q %q, want \"\" rocksdb innodb", inno.Engine, rocks.Engine, running.Engine)
	}
	want := []string{"plugin-load-add=ha_rocksdb.so", "default-storage-engine=rocksdb", "rocksdb_block_cache_size=64M"}
	if !slices.Equal(rocks.Managed.Options, want) || len(inno.Managed.Options) != 0 {
		t.Errorf("server options %q and %q, want %q and none", rocks.Managed.Options, inno.Managed.Options, want)
	}
	if rocks.AAOf != "" {
		t.Errorf("the MyRocks version is the A/A pair of %q", rocks.AAOf)
	}
	for _, c := range []struct {
		v     *Version
		extra []string
	}{
		{&p.Versions[0], []string{"--mysql-ignore-errors=all"}},
		{&p.Versions[1], []string{"--mysql-storage-engine=rocksdb", "--mysql-ignore-errors=all"}},
		{&p.Versions[2], []string{"--mysql-storage-engine=innodb", "--mysql-ignore-errors=all"}},
	} {
		o := p.SysbenchOptions(Item{Action: ActionLoad, Version: c.v}, suite.Options{})
		if !slices.Equal(o.Extra, c.extra) {
			t.Errorf("%s: sysbench options %q, want %q", c.v.Label, o.Extra, c.extra)
		}
	}

	got := parseErrors(t, `
[steps]
list = ["point-query"]
[[version]]
label = "toku"
basedir = "installed"
engine = "tokudb"
`)
	if len(got) != 1 || !strings.HasPrefix(got[0], "7: ") || !strings.Contains(got[0], `engine "tokudb": use "innodb" (InnoDB) or "rocksdb" (MyRocks)`) {
		t.Errorf("unknown engine: %q", got)
	}
}
