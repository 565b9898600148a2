package plan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/record"
)

func mustParse(t *testing.T, src string) *Plan {
	t.Helper()
	p, err := parse("/plans/test.toml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

// parseErrors returns the problems of a plan that must not parse, as
// "line: message" strings.
func parseErrors(t *testing.T, src string) []string {
	t.Helper()
	_, err := parse("/plans/bad.toml", []byte(src))
	if err == nil {
		t.Fatal("Parse accepted an invalid plan")
	}
	if !errors.Is(err, errInvalid) {
		t.Errorf("error %v does not wrap ErrInvalid", err)
	}
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %T is not Errors", err)
	}
	var out []string
	for _, e := range es {
		out = append(out, strings.TrimPrefix(e.Error(), "/plans/bad.toml:"))
	}
	return out
}

const minimal = `
[steps]
list = ["point-query"]

[[version]]
label = "a"
socket = "/run/mysqld.sock"
`

// TestHostTables: a plan's [[host]] tables are perfbench run's (package
// internal/remote checks them); the plan itself is the same with them as
// without, and an unknown key elsewhere is still refused.
func TestHostTables(t *testing.T) {
	withHosts := minimal + `
[[host]]
name = "h1"
destination = "bench@10.0.0.5"
anything = 1
[host.basedirs]
"a" = "/opt/a"
`
	p, q := mustParse(t, minimal), mustParse(t, withHosts)
	if !reflect.DeepEqual(p, q) {
		t.Errorf("with [[host]] tables: %+v\nwithout: %+v", q, p)
	}
	if got := parseErrors(t, withHosts+"[hosts]\nx = 1\n"); !reflect.DeepEqual(got, []string{"15: unknown key hosts", "16: unknown key hosts.x"}) {
		t.Errorf("errors: %q", got)
	}
}

func TestDefaults(t *testing.T) {
	p := mustParse(t, minimal)
	if p.Name != "test" || p.Base != "a" || p.OutDir != "test-results" || p.Dir != "/plans" || p.ServersDir != "" {
		t.Errorf("name %q base %q out %q dir %q servers %q", p.Name, p.Base, p.OutDir, p.Dir, p.ServersDir)
	}
	if p.Repeats != 1 || p.Interval != time.Second || p.Servers != serversOneAtATime || p.FlushTimeout != 10*time.Minute || p.Events != nil {
		t.Errorf("run defaults: %+v", p)
	}
	want := Data{Tables: 1, TableSize: 100000, DB: "sbtest", User: "sbtest", Password: "sbtest", RandType: "uniform", Load: true, Sysbench: "sysbench"}
	if !reflect.DeepEqual(p.Data, want) {
		t.Errorf("data %+v, want %+v", p.Data, want)
	}
	if len(p.Steps) != 1 {
		t.Fatalf("%d steps", len(p.Steps))
	}
	s := p.Steps[0]
	if s.Label != "point-query_range=100" || s.Suite == nil || s.Custom() || s.Warmup != 5*time.Second || s.Duration != time.Minute ||
		!reflect.DeepEqual(s.Threads, []int{1}) || s.Ops != "Questions" || s.OpsPer != 1 || s.Write || s.Group != suite.GroupPoint || s.Line != 3 {
		t.Errorf("step %+v", s)
	}
	v := p.Versions[0]
	if v.Target == nil || v.Managed != nil || v.Target.Socket != "/run/mysqld.sock" || v.Line != 5 {
		t.Errorf("version %+v", v)
	}
}

func TestFull(t *testing.T) {
	p := mustParse(t, `
name = "full-test"
base = "b"
[output]
dir = "out/x"
datadir = "data"
[run]
repeats = 3
threads = [1, 4]
warmup = 10
duration = "10m"
write_duration = "15m"
interval = "2s"
ops = "client.queries"
events = ["task-clock", "{cycles,instructions}"]
servers = "all-running"
flush_timeout = "1m"
[data]
tables = 8
table_size = 10_000_000
db = "bench"
user = "u"
password = ""
rand_type = "pareto"
load = false
sysbench = "bin/sysbench"
extra_args = ["--mysql-ignore-errors=all"]
[steps]
subset = "published"
exclude = ["scan", "random-points_range=1000"]
[steps.override.read-only]
threads = [2]
[steps.override."read-only_range=100"]
duration = "1m"
extra_args = ["--point_selects=5"]
[steps.override.delete]
ops = "Com_delete"
[[version]]
label = "a"
basedir = "/opt/a/usr"
mycnf = "a.cnf"
options = ["--skip-log-bin", "performance_schema=ON"]
init = "initialize"
port = 3400
[[version]]
label = "b"
basedir = "installed"
options = { innodb_buffer_pool_size = "1G", performance_schema = true, max_connections = 500 }
start = ["{basedir}/bin/mysqld_safe", "--datadir={datadir}"]
stop = ["kill", "{pid_file}"]
`)
	if p.Name != "full-test" || p.Base != "b" || p.OutDir != "/plans/out/x" || p.ServersDir != "/plans/data" || p.Repeats != 3 || p.Interval != 2*time.Second ||
		p.Servers != serversAllRunning || p.FlushTimeout != time.Minute || !reflect.DeepEqual(p.Events, []string{"task-clock", "{cycles,instructions}"}) {
		t.Errorf("plan %+v", p)
	}
	wantData := Data{Tables: 8, TableSize: 10000000, DB: "bench", User: "u", Password: "", RandType: "pareto", Load: false,
		Sysbench: "/plans/bin/sysbench", ExtraArgs: []string{"--mysql-ignore-errors=all"}}
	if !reflect.DeepEqual(p.Data, wantData) {
		t.Errorf("data %+v\nwant %+v", p.Data, wantData)
	}
	if len(p.Steps) != 30 {
		t.Errorf("%d steps, want 32 - 2 excluded", len(p.Steps))
	}
	by := map[string]Step{}
	for _, s := range p.Steps {
		by[s.Label] = s
	}
	if _, ok := by["scan_range=100"]; ok {
		t.Error("scan was excluded")
	}
	cases := []struct {
		label    string
		warmup   time.Duration
		duration time.Duration
		threads  []int
		ops      string
		extra    []string
	}{
		{"point-query_range=100", 10 * time.Second, 10 * time.Minute, []int{1, 4}, "client.queries", nil},
		{"read-only_range=10", 10 * time.Second, 10 * time.Minute, []int{2}, "client.queries", nil},
		{"read-only_range=100", 10 * time.Second, time.Minute, []int{2}, "client.queries", []string{"--point_selects=5"}},
		{"update-index_range=100", 10 * time.Second, 15 * time.Minute, []int{1, 4}, "client.queries", nil},
		{"delete_range=100", 10 * time.Second, 15 * time.Minute, []int{1, 4}, "Com_delete", nil},
	}
	for _, c := range cases {
		s := by[c.label]
		if s.Warmup != c.warmup || s.Duration != c.duration || !reflect.DeepEqual(s.Threads, c.threads) || s.Ops != c.ops ||
			!reflect.DeepEqual(s.ExtraArgs, c.extra) {
			t.Errorf("%s: warmup %v duration %v threads %v ops %s extra %q; want %v %v %v %s %q",
				c.label, s.Warmup, s.Duration, s.Threads, s.Ops, s.ExtraArgs, c.warmup, c.duration, c.threads, c.ops, c.extra)
		}
	}
	a, b := p.Versions[0].Managed, p.Versions[1].Managed
	wantA := &Managed{Basedir: "/opt/a/usr", Mycnf: "/plans/a.cnf", Options: []string{"skip-log-bin", "performance_schema=ON"}, Init: initInitialize, Port: 3400}
	if !reflect.DeepEqual(a, wantA) {
		t.Errorf("version a: %+v\nwant %+v", a, wantA)
	}
	wantB := &Managed{Basedir: Installed, Init: initAuto, Options: []string{"innodb_buffer_pool_size=1G", "max_connections=500", "performance_schema=ON"},
		Start: []string{"{basedir}/bin/mysqld_safe", "--datadir={datadir}"}, Stop: []string{"kill", "{pid_file}"}}
	if !reflect.DeepEqual(b, wantB) {
		t.Errorf("version b: %+v\nwant %+v", b, wantB)
	}
}

func TestErrors(t *testing.T) {
	got := parseErrors(t, `name = "x"
[run]
repeats = 0
threads = [1, 0, 1]
interval = "500ms"
treads = [2]
ops = "client.rows"
[data]
rand_type = "zipfian"
[steps]
list = [
  "point-query",
  "pont-query",
]
exclude = ["nothing-like-it"]
[steps.override.update-one]
duration = "0s"
[[steps.custom]]
name = "mine"
command = ["run", "{hots}"]
group = "reads"
[[version]]
label = "a b"
socket = "/s"
[[version]]
basedir = "/x"
pid = 4
[[version]]
label = "c"
[[version]]
label = "d"
basedir = "installed"
init = "magic"
stop = ["x"]
`)
	want := []string{
		`3: repeats is 0, must be 1 to 1000`,
		`4: threads: 0 is not a thread count (1 to 100000)`,
		`4: threads: 1 is listed twice`,
		`5: interval 500ms: use a whole number of seconds, 1s to 24h (sysbench reports every N seconds)`,
		`6: unknown key run.treads`,
		`7: ops "client.rows": use a status variable (Questions, Com_select, Rows_read, ...) or client.queries, client.transactions, client.events`,
		`9: rand_type: invalid sysbench options: sysbench 1.0.20 has no --rand-type=zipfian (the update-zipf step draws ` +
			`zipfian keys itself); use uniform, gaussian, special, pareto`,
		`13: steps.list: unknown step "pont-query" (did you mean point-query?)`,
		`15: steps.exclude: unknown step "nothing-like-it"`,
		`17: steps.override.update-one: duration 0s must be positive`,
		`20: custom step "mine": unknown placeholder {hots}: use {host}, {port}, {socket}, {user}, {password}, {db}, ` +
			`{tables}, {table_size}, {threads}, {warmup}, {duration}, {time}, {out}, {sysbench}, {rand_type}, {sysbench_options}`,
		`21: custom step "mine": group "reads": use point, range or writes`,
		`23: version "a b": use letters, digits and . _ + = - in a label (at most 64), starting with a letter or digit`,
		`25: version 2 has no label: give it one (it heads its column in the tables)`,
		`25: version 2 mixes a server perfbench starts (basedir, mycnf, options, init, start, stop) with a running server ` +
			`(pid, pid_file, socket, host, defaults_file, user, password): keep one kind`,
		`28: version "c": give either a server perfbench starts (basedir = "installed" or a folder, with mycnf or options) or ` +
			`a running server (socket, host and port, pid, pid_file or defaults_file)`,
		`33: version "d": init "magic": use auto, mariadb-install-db, initialize or none`,
		`34: version "d": a stop command needs a start command too`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestErrorsStructure(t *testing.T) {
	// The override of a step that does not exist says so, with the
	// suite's hint.
	_, err := parse("p.toml", []byte(minimal+"[steps.override.pointquery]\nduration = 1\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown step "pointquery"`) {
		t.Errorf("unknown override: %v, want unknown step \"pointquery\"", err)
	}
	if got := parseErrors(t, "[run]\nwarmup = true\n"); len(got) != 1 || !strings.HasPrefix(got[0], "2: ") ||
		!strings.Contains(got[0], "a duration is a string") {
		t.Errorf("bad duration: %q", got)
	}
	if got := parseErrors(t, "[run]\nthreads = [1,\n"); len(got) != 1 || !strings.HasPrefix(got[0], "2: ") {
		t.Errorf("syntax error: %q", got)
	}
	if got := parseErrors(t, "[run]\n"); !reflect.DeepEqual(got, []string{
		` the plan has no [[version]]: add one per server build or configuration to measure`}) {
		t.Errorf("no version: %q", got)
	}
	if got := parseErrors(t, "[[version]]\nlabel = \"a\"\nhost = \"h\"\nport = 3306\n"); !reflect.DeepEqual(got, []string{
		` the plan selects no step: set steps.subset (full, published or fast), list steps in steps.list, or add [[steps.custom]]`}) {
		t.Errorf("no step: %q", got)
	}
	if got := parseErrors(t, minimal+"[[version]]\nlabel = \"a\"\nhost = \"h\"\n"); len(got) != 1 ||
		!strings.Contains(got[0], `version "a" is defined twice (lines 6 and 9)`) {
		t.Errorf("duplicate label: %q", got)
	}
	if got := parseErrors(t, `base = "zz"`+minimal); len(got) != 1 || !strings.Contains(got[0], `1: base "zz" is not the label of a version`) {
		t.Errorf("unknown base: %q", got)
	}
}

func TestEnvironment(t *testing.T) {
	src := `
[steps]
subset = "fast"
[[version]]
label = "a"
basedir = "installed"
[[version]]
label = "b"
basedir = "${PB_TEST_BASEDIR}/usr"
options = ["lc-messages-dir=${PB_TEST_BASEDIR}/usr/share/mysql"]
optional = true
`
	t.Setenv("PB_TEST_BASEDIR", "")
	p := mustParse(t, src)
	if len(p.Versions) != 1 || len(p.Warnings) != 1 || p.Warnings[0] != `version "b" left out: ${PB_TEST_BASEDIR} not set` {
		t.Errorf("versions %v warnings %q", p.Versions, p.Warnings)
	}
	t.Setenv("PB_TEST_BASEDIR", "/opt/m")
	p = mustParse(t, src)
	if len(p.Versions) != 2 || p.Versions[1].Managed.Basedir != "/opt/m/usr" ||
		!reflect.DeepEqual(p.Versions[1].Managed.Options, []string{"lc-messages-dir=/opt/m/usr/share/mysql"}) || len(p.Warnings) != 0 {
		t.Errorf("versions %+v warnings %q", p.Versions[1].Managed, p.Warnings)
	}
	t.Setenv("PB_TEST_BASEDIR", "")
	got := parseErrors(t, strings.Replace(src, "optional = true", "", 1))
	if len(got) != 1 || !strings.Contains(got[0], `7: version "b" uses ${PB_TEST_BASEDIR}, which is not set`) {
		t.Errorf("unset variable: %q", got)
	}
}

func TestCustomSteps(t *testing.T) {
	p := mustParse(t, `
[run]
duration = "30s"
write_duration = "60s"
[steps]
list = ["mixed", "point-query"]
[[steps.custom]]
name = "mixed"
command = ["sh", "-c", "sleep {time}"]
[[steps.custom]]
name = "bulk-insert"
command = ["loader", "--threads={threads}"]
ops = "Com_insert"
ops_per = 1000
threads = [8]
[[version]]
label = "a"
host = "127.0.0.1"
port = 3306
`)
	var labels []string
	for _, s := range p.Steps {
		labels = append(labels, s.Label)
	}
	if want := []string{"mixed", "point-query_range=100", "bulk-insert"}; !reflect.DeepEqual(labels, want) {
		t.Fatalf("steps %q, want %q", labels, want)
	}
	mixed, bulk := p.Steps[0], p.Steps[2]
	if !mixed.Custom() || mixed.Write || mixed.Group != suite.GroupRange || mixed.Duration != 30*time.Second || mixed.Line != 6 {
		t.Errorf("mixed: %+v", mixed)
	}
	if !bulk.Write || bulk.Group != suite.GroupWrites || bulk.Ops != "Com_insert" || bulk.OpsPer != 1000 ||
		bulk.Duration != time.Minute || !reflect.DeepEqual(bulk.Threads, []int{8}) || bulk.Line != 10 {
		t.Errorf("bulk-insert: %+v", bulk)
	}
	c, err := Expand(bulk.Command, map[string]string{"threads": "8"})
	if err != nil || !reflect.DeepEqual(c.Argv, []string{"loader", "--threads=8"}) || !reflect.DeepEqual(c.Shown, c.Argv) || c.Env != nil {
		t.Errorf("Expand = %q, %v", c, err)
	}
	if _, err := Expand(mixed.Command, map[string]string{}); err == nil || !strings.Contains(err.Error(), "no value for {time}") {
		t.Errorf("Expand without a value: %v", err)
	}
	if got := parseErrors(t, strings.Replace(minimal, `["point-query"]`, `["x"]`, 1)+"[[steps.custom]]\nname = \"scan\"\ncommand = [\"x\"]\n"); len(got) < 1 ||
		!strings.Contains(strings.Join(got, "\n"), `custom step "scan" has the name of a suite step`) {
		t.Errorf("custom step named like a suite step: %q", got)
	}
}

// TestLineIndex: a plan's keys are indexed by package tomlpos (whose
// tests cover the shapes of TOML); the plan's errors name their lines.
func TestLineIndex(t *testing.T) {
	ix := indexLines("a = 1\n[[arr]]\n[arr.sub]\nd = [\n  \"x\",\n]\n")
	for path, want := range map[string]int{"a": 1, "arr[0]": 2, "arr[0].sub.d=x": 5, "arr[0].sub.missing": 3, "b": 0} {
		if got := ix.line(path); got != want {
			t.Errorf("line(%q) = %d, want %d", path, got, want)
		}
	}
}

func TestMeasurementID(t *testing.T) {
	r := record.New(record.KindStep)
	r.Version, r.Step, r.Threads, r.Repeat = "10.11.6", "read-only_range=100", 4, 2
	r.Host = "any-host"
	if got, want := RecordID(r), "10.11.6/read-only_range=100/t4/r2"; got != want || measurementID("10.11.6", "read-only_range=100", 4, 2) != want {
		t.Errorf("RecordID = %q, want %q", got, want)
	}
}

func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../../../examples/plans/*.toml")
	if err != nil || len(files) < 4 {
		t.Fatalf("example plans: %v, %v", files, err)
	}
	t.Setenv("PERFBENCH_OLD", "/opt/mariadb-10.11.6")
	t.Setenv("PERFBENCH_SECOND_BASEDIR", "")
	for _, f := range files {
		p, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if items := p.Expand(); Measurements(items) == 0 {
			t.Errorf("%s: no measurement", f)
		}
		// Every suite step's command line builds.
		for _, it := range p.Expand() {
			if it.Action != ActionMeasure || it.Step.Custom() {
				continue
			}
			o := p.SysbenchOptions(it, suite.Options{ScriptDir: "/tmp/x", Socket: "/tmp/s", ConfigFile: "/tmp/c"})
			if _, err := suite.Command(*it.Step.Suite, o); err != nil {
				t.Errorf("%s: %s: %v", f, it.ID, err)
			}
		}
	}
}

func TestSmokeExample(t *testing.T) {
	t.Setenv("PERFBENCH_SECOND_BASEDIR", "")
	p, err := Load("../../../examples/plans/smoke.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Versions) != 2 || p.Versions[0].Managed == nil || p.Versions[0].Managed.Basedir != Installed ||
		!strings.Contains(strings.Join(p.Versions[1].Managed.Options, " "), "performance_schema=ON") || len(p.Warnings) != 1 {
		t.Errorf("versions %+v, warnings %q", p.Versions, p.Warnings)
	}
	var got []string
	for _, it := range p.Expand() {
		got = append(got, string(it.Action)+" "+it.ID)
	}
	// Both versions run at once, loaded first, and every step's
	// versions are measured together (compare = "auto").
	want := []string{
		"start start/default/r1",
		"start start/pfs/r1",
		"load load/default",
		"load load/pfs",
		"measure default/point-query_range=100/t1/r1",
		"measure pfs/point-query_range=100/t1/r1",
		"measure default/update-index_range=100/t1/r1",
		"measure pfs/update-index_range=100/t1/r1",
		"flush flush/default/read-only_range=100/t1/r1",
		"flush flush/pfs/read-only_range=100/t1/r1",
		"measure default/read-only_range=100/t1/r1",
		"measure pfs/read-only_range=100/t1/r1",
		"stop stop/default",
		"stop stop/pfs",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("smoke expands to:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Under two minutes here: 2 versions × 3 steps × (2 s + 5 s + 1 s of
	// tail), plus starts, loads and a flush of a few seconds each.
	var total time.Duration
	for _, it := range p.Expand() {
		if it.Action == ActionMeasure {
			w, d := it.Window()
			total += w + d + time.Second
		}
	}
	if total > 70*time.Second {
		t.Errorf("smoke measures for %v, leaving too little of two minutes for the rest", total)
	}
	t.Setenv("PERFBENCH_SECOND_BASEDIR", "/opt/m/usr")
	p, err = Load("../../../examples/plans/smoke.toml")
	if err != nil || len(p.Versions) != 3 || p.Versions[2].Managed.Basedir != "/opt/m/usr" {
		t.Errorf("with a second release: %v, %+v", err, p)
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.toml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func TestProfile(t *testing.T) {
	p := mustParse(t, `
[run]
profile = 999
profile_event = "cpu-clock"
[steps]
list = ["point-query", "read-only", "mine"]
[steps.override.read-only]
profile = 0
[steps.override."read-only_range=100"]
profile = 199
profile_event = "task-clock"
[[steps.custom]]
name = "mine"
command = ["true"]
profile = true
[[version]]
label = "a"
socket = "/s"
`)
	got := map[string]string{}
	for _, st := range p.Steps {
		got[st.Label] = fmt.Sprintf("%d %s", st.Profile, st.ProfileEvent)
	}
	want := map[string]string{
		"point-query_range=100": "999 cpu-clock",
		"read-only_range=10":    "0 cpu-clock",
		"read-only_range=100":   "199 task-clock",
		"read-only_range=10000": "0 cpu-clock",
		"mine":                  "99 cpu-clock",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("profile per step %v, want %v", got, want)
	}
	if !p.Profiled() || len(p.Warnings) > 0 {
		t.Errorf("Profiled %v, warnings %q", p.Profiled(), p.Warnings)
	}

	// Off by default; an event with nothing to sample is a warning.
	p = mustParse(t, minimal)
	if s := p.Steps[0]; s.Profile != 0 || s.ProfileEvent != "" || p.Profiled() {
		t.Errorf("default: profile %d %q, Profiled %v", s.Profile, s.ProfileEvent, p.Profiled())
	}
	p = mustParse(t, "[run]\nprofile = false\nprofile_event = \"cycles\"\n"+minimal)
	if p.Profiled() || len(p.Warnings) != 1 || p.Warnings[0] != "profile_event is set (line 3) but no step samples: set profile = 99 in [run] or for a step" {
		t.Errorf("profile_event without profile: Profiled %v, warnings %q", p.Profiled(), p.Warnings)
	}

	for src, want := range map[string]string{
		"[run]\nprofile = -1\n":                            `2: profile = -1: give samples per second per CPU (99, 999), or 0 for none`,
		"[run]\nprofile = \"fast\"\n":                      `2: profile is samples per second per CPU (99, 999), 0 or false for none, true for 99; not "fast"`,
		"[run]\nprofile_event = \"cycles,instructions\"\n": `2: profile_event "cycles,instructions": name one event to sample (cpu-clock, cycles, ...)`,
	} {
		got := parseErrors(t, src+minimal)
		if len(got) != 1 || got[0] != want {
			t.Errorf("%q: errors %q, want %q", src, got, want)
		}
	}
}

// TestBounds: every number of a plan has a bound, said in the error with
// the line, so that a plan cannot ask for more than memory or time holds
// (repeats = 1000000000 used to end in out of memory expanding the plan).
func TestBounds(t *testing.T) {
	threads101 := make([]string, 101)
	for i := range threads101 {
		threads101[i] = fmt.Sprint(i + 1)
	}
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"repeats", "[run]\nrepeats = 1000000000\n" + minimal,
			[]string{`2: repeats is 1000000000, must be 1 to 1000`}},
		{"measurements", "[run]\nrepeats = 1000\nthreads = [" + strings.Join(threads101, ",") + "]\n" + minimal,
			[]string{`2: the plan has 101000 measurements (repeats × versions × steps × thread counts), at most 100000: fewer repeats, steps or thread counts`}},
		{"plan time", "[run]\nrepeats = 1000\nduration = \"24h\"\nthreads = [1,2,3,4,5,6,7,8,9,10]\n" + minimal,
			[]string{`2: the plan's warm-ups and windows alone take 10001 days, at most 366: fewer repeats, steps or thread counts, or shorter durations`}},
		{"threads", "[run]\nthreads = [1000000]\n" + minimal,
			[]string{`2: threads: 1000000 is not a thread count (1 to 100000)`}},
		{"duration", "[run]\nduration = \"25h\"\n" + minimal,
			[]string{`2: duration 25h0m0s is longer than perfbench takes (at most 24h)`}},
		{"seconds", "[run]\nwarmup = 99999999999\n" + minimal,
			[]string{`2: 99999999999 seconds is not a duration perfbench takes (at most 24h)`}},
		{"tables", "[data]\ntables = 100000\ntable_size = 99999999999\n" + minimal,
			[]string{`2: tables is 100000, must be 1 to 10000`, `3: table_size is 99999999999, must be 1 to 2147483647`}},
		{"ops_per", minimal + "[[steps.custom]]\nname = \"c\"\ncommand = [\"true\"]\nops_per = nan\n[steps.override.point-query]\nops_per = inf\n",
			[]string{`11: custom step "c": ops_per NaN must be a positive number, at most 1e+09`, `13: ` +
				`steps.override.point-query: ops_per +Inf must be a positive number, at most 1e+09`}},
	} {
		got := parseErrors(t, c.src)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: errors\n%s\nwant\n%s", c.name, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}

// TestNegativeDuration: a negative duration is one error, on its own line
// and key; not also one for write_duration (which the plan does not set)
// and one for every step.
func TestNegativeDuration(t *testing.T) {
	got := parseErrors(t, `name = "x"
[run]
warmup = "1s"
duration = "-5s"
[steps]
list = ["point-query", "read-only", "update-index", "c"]
[[steps.custom]]
name = "c"
command = ["true"]
[[steps.custom]]
name = "d"
command = ["true"]
warmup = "-1s"
[[version]]
label = "a"
socket = "/s"
`)
	want := []string{`4: duration -5s must be positive`, `13: custom step "d": warmup -1s must be zero or more`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
