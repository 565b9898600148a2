package plan

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/perfevent"
)

// duration is a TOML duration: a string time.ParseDuration takes ("90s",
// "10m") or a number of seconds.
type duration struct {
	d   time.Duration
	set bool
}

func (d *duration) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		t, err := time.ParseDuration(x)
		if err != nil {
			return fmt.Errorf("%q is not a duration: write it like \"30s\", \"10m\" or a number of seconds", x)
		}
		d.d = t
	case int64:
		if x > maxSeconds || x < -maxSeconds {
			return fmt.Errorf("%d seconds is not a duration perfbench takes (at most %s)", x, short(maxDuration))
		}
		d.d = time.Duration(x) * time.Second
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > maxSeconds {
			return fmt.Errorf("%v seconds is not a duration perfbench takes (at most %s)", x, short(maxDuration))
		}
		d.d = time.Duration(x * float64(time.Second))
	default:
		return fmt.Errorf("a duration is a string like \"30s\" or a number of seconds, not %T", v)
	}
	d.set = true
	return nil
}

// maxSeconds bounds a duration given as a number of seconds before it is
// multiplied into nanoseconds; the parser then applies maxDuration.
const maxSeconds = 1e9

// profileFreq is a sampling frequency in Hz: a number (0 turns sampling
// off) or a boolean (true samples at perfevent.DefaultSampleFreq).
type profileFreq struct {
	hz  int
	set bool
}

func (f *profileFreq) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		if x < 0 || x > math.MaxInt32 {
			return fmt.Errorf("profile = %d: give samples per second per CPU (99, 999), or 0 for none", x)
		}
		f.hz = int(x)
	case bool:
		f.hz = 0
		if x {
			f.hz = perfevent.DefaultSampleFreq
		}
	default:
		return fmt.Errorf("profile is samples per second per CPU (99, 999), 0 or false for none, true for %d; not %#v", perfevent.DefaultSampleFreq, v)
	}
	f.set = true
	return nil
}

// optionList is a server's options: an array of strings ("skip-log-bin",
// "performance_schema=ON") or a table (performance_schema = "ON").
type optionList struct {
	opts []string
	set  bool
}

func (o *optionList) UnmarshalTOML(v any) error {
	o.set = true
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("options are strings like \"performance_schema=ON\", not %v", e)
			}
			o.opts = append(o.opts, s)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			var val string
			switch y := x[k].(type) {
			case string:
				val = y
			case bool:
				val = "OFF"
				if y {
					val = "ON"
				}
			case int64:
				val = fmt.Sprint(y)
			case float64:
				val = fmt.Sprint(y)
			default:
				return fmt.Errorf("option %s: value %v is not a string, number or boolean", k, x[k])
			}
			o.opts = append(o.opts, k+"="+val)
		}
	default:
		return fmt.Errorf("options are an array of strings or a table, not %T", v)
	}
	return nil
}

type rawPlan struct {
	Name    string       `toml:"name"`
	Base    string       `toml:"base"`
	Output  rawOutput    `toml:"output"`
	Run     rawRun       `toml:"run"`
	Data    rawData      `toml:"data"`
	Steps   rawSteps     `toml:"steps"`
	Insert  rawInsert    `toml:"insert"`
	Version []rawVersion `toml:"version"`
}

type rawOutput struct {
	Dir     string `toml:"dir"`
	Datadir string `toml:"datadir"`
}

type rawRun struct {
	Repeats       repeatsValue `toml:"repeats"`
	Precision     *float64     `toml:"precision"`
	MaxRepeats    *int         `toml:"max_repeats"`
	RetryBusy     *int         `toml:"retry_busy"`
	Threads       []int        `toml:"threads"`
	Warmup        duration     `toml:"warmup"`
	Duration      duration     `toml:"duration"`
	WriteDuration duration     `toml:"write_duration"`
	Interval      duration     `toml:"interval"`
	Ops           string       `toml:"ops"`
	Events        []string     `toml:"events"`
	PMUBudget     *int         `toml:"pmu_budget"`
	Servers       string       `toml:"servers"`
	FlushTimeout  duration     `toml:"flush_timeout"`
	Profile       profileFreq  `toml:"profile"`
	ProfileEvent  string       `toml:"profile_event"`
	// Comparisons (compare.go).
	Compare string   `toml:"compare"`
	Slice   duration `toml:"slice"`
	// Placement (placement.go).
	Placement  string  `toml:"placement"`
	CPUs       cpuList `toml:"cpus"`
	ServerCPUs cpuList `toml:"server_cpus"`
	ClientCPUs cpuList `toml:"client_cpus"`
}

type rawData struct {
	Tables    *int     `toml:"tables"`
	TableSize *int     `toml:"table_size"`
	DB        string   `toml:"db"`
	User      string   `toml:"user"`
	Password  *string  `toml:"password"`
	RandType  string   `toml:"rand_type"`
	Load      *bool    `toml:"load"`
	Sysbench  string   `toml:"sysbench"`
	ExtraArgs []string `toml:"extra_args"`
}

type rawSteps struct {
	Subset   string                 `toml:"subset"`
	List     []string               `toml:"list"`
	Exclude  []string               `toml:"exclude"`
	Custom   []rawCustom            `toml:"custom"`
	Override map[string]rawOverride `toml:"override"`
}

type rawOverride struct {
	Warmup       duration    `toml:"warmup"`
	Duration     duration    `toml:"duration"`
	Threads      []int       `toml:"threads"`
	Ops          string      `toml:"ops"`
	OpsPer       float64     `toml:"ops_per"`
	ExtraArgs    []string    `toml:"extra_args"`
	Profile      profileFreq `toml:"profile"`
	ProfileEvent string      `toml:"profile_event"`
}

type rawCustom struct {
	Name     string   `toml:"name"`
	Command  []string `toml:"command"`
	Write    *bool    `toml:"write"`
	Group    string   `toml:"group"`
	Ops      string   `toml:"ops"`
	OpsPer   float64  `toml:"ops_per"`
	Warmup   duration `toml:"warmup"`
	Duration duration `toml:"duration"`
	Threads  []int    `toml:"threads"`
	// Sampling.
	Profile      profileFreq `toml:"profile"`
	ProfileEvent string      `toml:"profile_event"`
}

type rawVersion struct {
	Label    string `toml:"label"`
	Optional bool   `toml:"optional"`
	// AAOf names the version this one measures again (an A/A pair).
	AAOf string `toml:"aa_of"`
	// Engine is the storage engine of the data set's tables.
	Engine string `toml:"engine"`
	// A server perfbench manages.
	Basedir string     `toml:"basedir"`
	Mycnf   string     `toml:"mycnf"`
	Options optionList `toml:"options"`
	Init    string     `toml:"init"`
	Start   []string   `toml:"start"`
	Stop    []string   `toml:"stop"`
	// Both.
	Port int `toml:"port"`
	// A running server.
	Pid          int    `toml:"pid"`
	PidFile      string `toml:"pid_file"`
	Socket       string `toml:"socket"`
	Host         string `toml:"host"`
	DefaultsFile string `toml:"defaults_file"`
	User         string `toml:"user"`
	Password     string `toml:"password"`
}

// parser collects problems while building a Plan.
type parser struct {
	file  string
	lines lineIndex
	errs  Errors
	// passwordSet: the plan sets data.password.
	passwordSet bool
}

func (p *parser) errorf(key string, format string, args ...any) {
	p.errs = append(p.errs, &planError{File: p.file, Line: p.lines.line(key), Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) wrapf(key string, err error, format string, args ...any) {
	p.errs = append(p.errs, &planError{File: p.file, Line: p.lines.line(key), Msg: fmt.Sprintf(format, args...), Err: err})
}

var labelRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+=-]{0,63}$`)
var opsRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]*|client\.(queries|transactions|events))$`)

// maxNesting is how deep a plan's arrays and inline tables may nest.
const maxNesting = 64

// nesting is how deep the arrays and inline tables of the TOML document
// src nest (table headers count as one level, [[...]] as two), up to
// maxNesting+1, and the line where that depth is first reached. Brackets
// in strings and comments do not count.
func nesting(src string) (depth, line int) {
	d, ln := 0, 1
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '\n':
			ln++
		case '#':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			delim := src[i : i+1]
			if strings.HasPrefix(src[i:], strings.Repeat(delim, 3)) {
				delim = src[i : i+3]
			}
			j := i + len(delim)
			for j < len(src) && !strings.HasPrefix(src[j:], delim) {
				if c == '"' && src[j] == '\\' {
					j++
				}
				if j < len(src) && src[j] == '\n' {
					ln++
				}
				j++
			}
			j += len(delim)
			// A multi-line string may end in one or two more quotes.
			for k := 0; len(delim) == 3 && k < 2 && j < len(src) && src[j] == c; k++ {
				j++
			}
			i = j - 1
		case '[', '{':
			d++
			if d > depth {
				depth, line = d, ln
				if depth > maxNesting {
					return depth, line
				}
			}
		case ']', '}':
			d = max(d-1, 0)
		}
	}
	return depth, line
}

func (p *parser) parse(data []byte) *Plan {
	// The decoder recurses once per level of arrays and inline tables:
	// far enough, it exhausts the stack, which no recover catches.
	if depth, line := nesting(string(data)); depth > maxNesting {
		p.errs = append(p.errs, &planError{File: p.file, Line: line,
			Msg: fmt.Sprintf("arrays and inline tables nested %d deep or more here, over the bound of %d levels: a plan needs a few", depth, maxNesting)})
		return nil
	}
	var raw rawPlan
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			p.errs = append(p.errs, &planError{File: p.file, Line: pe.Position.Line, Msg: pe.Message, Err: err})
		} else {
			p.errs = append(p.errs, &planError{File: p.file, Msg: err.Error(), Err: err})
		}
		return nil
	}
	p.lines = indexLines(string(data))
	for _, k := range md.Undecoded() {
		if k[0] == "host" {
			// [[host]] tables are perfbench run's (package internal/remote).
			continue
		}
		key := p.lines.path(k)
		p.errorf(key, "unknown key %s", k)
	}

	dir, _ := filepath.Abs(filepath.Dir(p.file))
	plan := &Plan{File: p.file, Dir: dir}

	plan.Name = raw.Name
	if plan.Name == "" {
		plan.Name = defaultName(p.file)
	}
	if !labelRE.MatchString(plan.Name) {
		p.errorf("name", "name %q: use letters, digits and . _ + = - (at most 64), starting with a letter or digit", plan.Name)
	}
	if raw.Output.Dir != "" {
		plan.OutDir = p.path("output.dir", raw.Output.Dir, dir, nil)
	} else {
		plan.OutDir = plan.Name + "-results"
	}
	if raw.Output.Datadir != "" {
		plan.ServersDir = p.path("output.datadir", raw.Output.Datadir, dir, nil)
	}

	p.run(plan, &raw.Run)
	p.placement(plan, &raw.Run)
	p.data(plan, &raw.Data, dir)
	p.versions(plan, raw.Version, dir)
	p.aaOf(plan, raw.Version)
	p.steps(plan, &raw.Steps, &raw.Run, &raw.Insert)
	p.insertPlan(plan, &raw.Insert)
	p.compare(plan, &raw.Run)
	p.compareSteps(plan, &raw.Run)
	p.checkSize(plan, raw.Run.Repeats.set)

	plan.Base = raw.Base
	if plan.Base == "" && len(plan.Versions) > 0 {
		plan.Base = plan.Versions[0].Label
	}
	if plan.Base != "" && len(plan.Versions) > 0 {
		found := false
		for _, v := range plan.Versions {
			found = found || v.Label == plan.Base
		}
		if !found {
			p.errorf("base", "base %q is not the label of a version", plan.Base)
		}
	}
	return plan
}

// path expands environment variables in a path and resolves it against
// dir. missing, when not nil, collects the variables that were unset or
// empty; when nil they are errors.
func (p *parser) path(key, v, dir string, missing *[]string) string {
	var unset []string
	out := os.Expand(v, func(name string) string {
		val := os.Getenv(name)
		if val == "" {
			unset = append(unset, name)
		}
		return val
	})
	if len(unset) > 0 {
		if missing != nil {
			*missing = append(*missing, unset...)
		} else {
			p.errorf(key, "%s uses ${%s}, which is not set", lastKey(key), strings.Join(unset, "}, ${"))
		}
		return ""
	}
	if rest, ok := strings.CutPrefix(out, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if out == "" || filepath.IsAbs(out) {
		return out
	}
	return filepath.Join(dir, out)
}

func lastKey(key string) string {
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		return key[i+1:]
	}
	return key
}

func (p *parser) run(plan *Plan, r *rawRun) {
	p.repeats(plan, r)
	plan.Interval = time.Second
	if r.Interval.set {
		plan.Interval = r.Interval.d
		if plan.Interval < time.Second || plan.Interval > maxDuration || plan.Interval%time.Second != 0 {
			p.errorf("run.interval", "interval %v: use a whole number of seconds, 1s to %s (sysbench reports every N seconds)", plan.Interval, short(maxDuration))
		}
	}
	plan.Servers = serversOneAtATime
	switch r.Servers {
	case "", serversOneAtATime:
	case serversAllRunning:
		plan.Servers = serversAllRunning
	default:
		p.errorf("run.servers", "servers %q: use %q or %q", r.Servers, serversOneAtATime, serversAllRunning)
	}
	plan.FlushTimeout = 10 * time.Minute
	if r.FlushTimeout.set {
		plan.FlushTimeout = r.FlushTimeout.d
		p.checkDuration("run.flush_timeout", "", plan.FlushTimeout, true)
	}
	seen := map[string]bool{}
	for _, e := range r.Events {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
			p.errorf("run.events", "events: an empty event name")
		case seen[e]:
			p.errorf("run.events="+e, "events: %s is listed twice", e)
		}
		seen[e] = true
		plan.Events = append(plan.Events, e)
	}
	if r.PMUBudget != nil {
		plan.PMUBudget = *r.PMUBudget
		if plan.PMUBudget < 1 || plan.PMUBudget > MaxPMUBudget {
			p.errorf("run.pmu_budget", "pmu_budget is %d, must be 1 to %d (events a repeat counts besides task-clock)", plan.PMUBudget, MaxPMUBudget)
		}
	}
}

func (p *parser) data(plan *Plan, d *rawData, dir string) {
	out := Data{Tables: 1, TableSize: 100000, DB: "sbtest", User: "sbtest", Password: "sbtest",
		RandType: "uniform", Load: true, Sysbench: "sysbench", ExtraArgs: d.ExtraArgs}
	if d.Tables != nil {
		out.Tables = *d.Tables
		if out.Tables < 1 || out.Tables > maxTables {
			p.errorf("data.tables", "tables is %d, must be 1 to %d", out.Tables, maxTables)
		}
	}
	if d.TableSize != nil {
		out.TableSize = *d.TableSize
		if out.TableSize < 1 || out.TableSize > maxTableSize {
			p.errorf("data.table_size", "table_size is %d, must be 1 to %d", out.TableSize, maxTableSize)
		}
	}
	if d.DB != "" {
		out.DB = d.DB
	}
	if d.User != "" {
		out.User = d.User
	}
	if d.Password != nil {
		out.Password = *d.Password
		p.passwordSet = out.Password != ""
		if err := suite.CheckPassword(out.Password); err != nil {
			p.wrapf("data.password", err, "%v", err)
		}
	}
	if d.RandType != "" {
		out.RandType = d.RandType
		if err := suite.CheckRandType(d.RandType); err != nil {
			p.wrapf("data.rand_type", err, "rand_type: %v", err)
		}
	}
	if d.Load != nil {
		out.Load = *d.Load
	}
	if d.Sysbench != "" {
		out.Sysbench = d.Sysbench
		if strings.ContainsRune(d.Sysbench, '/') {
			out.Sysbench = p.path("data.sysbench", d.Sysbench, dir, nil)
		}
	}
	plan.Data = out
}

func (p *parser) versions(plan *Plan, raws []rawVersion, dir string) {
	if len(raws) == 0 {
		p.errorf("", "the plan has no [[version]]: add one per server build or configuration to measure")
		return
	}
	seen := map[string]int{}
	for i, r := range raws {
		key := fmt.Sprintf("version[%d]", i)
		k := func(field string) string { return key + "." + field }
		name := fmt.Sprintf("version %d", i+1)
		if r.Label != "" {
			name = fmt.Sprintf("version %q", r.Label)
		}
		switch {
		case r.Label == "":
			p.errorf(key, "%s has no label: give it one (it heads its column in the tables)", name)
		case !labelRE.MatchString(r.Label):
			p.errorf(k("label"), "%s: use letters, digits and . _ + = - in a label (at most 64), starting with a letter or digit", name)
		case seen[r.Label] > 0:
			p.errorf(k("label"), "%s is defined twice (lines %d and %d)", name, seen[r.Label], p.lines.line(k("label")))
		}
		seen[r.Label] = p.lines.line(k("label"))

		managed := r.Basedir != "" || r.Mycnf != "" || r.Options.set || r.Init != "" || len(r.Start) > 0 || len(r.Stop) > 0
		running := r.Pid != 0 || r.PidFile != "" || r.Socket != "" || r.Host != "" || r.DefaultsFile != "" || r.User != "" || r.Password != ""
		v := Version{Label: r.Label, Line: p.lines.line(key)}
		v.Engine = p.engine(k("engine"), name, r.Engine)
		var missing []string
		switch {
		case managed && running:
			p.errorf(key, "%s mixes a server perfbench starts (basedir, mycnf, options, init, start, stop) with a running server "+
				"(pid, pid_file, socket, host, defaults_file, user, password): keep one kind", name)
			continue
		case managed:
			// The engine's options come before the plan's, which may override them.
			m := &Managed{Init: initAuto, Start: r.Start, Stop: r.Stop, Port: r.Port, Options: engineOptions(v.Engine)}
			switch {
			case r.Basedir == Installed:
				m.Basedir = Installed
			case r.Basedir != "":
				m.Basedir = p.path(k("basedir"), r.Basedir, dir, &missing)
			case len(r.Start) == 0:
				p.errorf(key, "%s: set basedir (a server's installation folder, or %q) or a start command", name, Installed)
			}
			if r.Mycnf != "" {
				m.Mycnf = p.path(k("mycnf"), r.Mycnf, dir, &missing)
			}
			for _, o := range r.Options.opts {
				o = strings.TrimLeft(strings.TrimSpace(o), "-")
				o = os.Expand(o, func(name string) string {
					val := os.Getenv(name)
					if val == "" {
						missing = append(missing, name)
					}
					return val
				})
				if o == "" || strings.HasPrefix(o, "=") {
					p.errorf(k("options"), "%s: an empty server option", name)
					continue
				}
				m.Options = append(m.Options, o)
			}
			switch r.Init {
			case "", initAuto:
			case initInstallDB, initInitialize, InitNone:
				m.Init = r.Init
			default:
				p.errorf(k("init"), "%s: init %q: use %s, %s, %s or %s", name, r.Init, initAuto, initInstallDB, initInitialize, InitNone)
			}
			p.checkCommand(k("start"), name+" start", r.Start, lifecyclePlaceholders)
			p.checkCommand(k("stop"), name+" stop", r.Stop, lifecyclePlaceholders)
			if len(r.Stop) > 0 && len(r.Start) == 0 {
				p.errorf(k("stop"), "%s: a stop command needs a start command too", name)
			}
			v.Managed = m
		case running:
			t := &Target{Pid: r.Pid, Socket: r.Socket, Host: r.Host, Port: r.Port, User: r.User, Password: r.Password}
			if r.PidFile != "" {
				t.PidFile = p.path(k("pid_file"), r.PidFile, dir, &missing)
			}
			if r.DefaultsFile != "" {
				t.DefaultsFile = p.path(k("defaults_file"), r.DefaultsFile, dir, &missing)
			}
			if r.Socket != "" {
				t.Socket = p.path(k("socket"), r.Socket, dir, &missing)
			}
			if r.Pid < 0 {
				p.errorf(k("pid"), "%s: pid %d is not a process id", name, r.Pid)
			}
			if t.Pid == 0 && r.PidFile == "" && r.Socket == "" && r.Host == "" && r.DefaultsFile == "" {
				p.errorf(key, "%s: say how to reach the running server: pid, pid_file, socket, host and port, or defaults_file", name)
			}
			v.Target = t
		default:
			if r.Port != 0 {
				p.errorf(key, "%s: a port alone does not say which server: add host = \"127.0.0.1\" for a running server, or basedir for one perfbench starts", name)
			} else {
				p.errorf(key, "%s: give either a server perfbench starts (basedir = %q or a folder, with mycnf or options) or a "+
					"running server (socket, host and port, pid, pid_file or defaults_file)", name, Installed)
			}
			continue
		}
		if r.Port < 0 || r.Port > 65535 {
			p.errorf(k("port"), "%s: port %d is not a TCP port", name, r.Port)
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			missing = slices.Compact(missing)
			vars := "${" + strings.Join(missing, "}, ${") + "}"
			if r.Optional {
				plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s left out: %s not set", name, vars))
				continue
			}
			p.errorf(key, "%s uses %s, which is not set (mark the version optional = true to leave it out when it is not)", name, vars)
			continue
		}
		plan.Versions = append(plan.Versions, v)
	}
}

// engine checks a version's engine key and returns it in lower case.
func (p *parser) engine(key, name, raw string) string {
	switch e := strings.ToLower(raw); e {
	case "", suite.EngineInnoDB, suite.EngineRocksDB:
		return e
	}
	p.errorf(key, "%s: engine %q: use %q (InnoDB) or %q (MyRocks)", name, raw, suite.EngineInnoDB, suite.EngineRocksDB)
	return ""
}

// engineOptions are the server options a managed version of the engine
// starts with: for engine = "rocksdb", MariaDB's MyRocks plugin (Debian's
// mariadb-plugin-rocksdb) loaded, and RocksDB the default engine.
func engineOptions(engine string) []string {
	if engine == suite.EngineRocksDB {
		return []string{"plugin-load-add=ha_rocksdb.so", "default-storage-engine=rocksdb"}
	}
	return nil
}

// Placeholders commands may use; see Expand.
var (
	lifecyclePlaceholders = []string{"basedir", "datadir", "socket", "port", "pid_file", "mycnf", "error_log", "out"}
	stepPlaceholders      = []string{"host", "port", "socket", "user", "password", "db", "tables", "table_size",
		"threads", "warmup", "duration", "time", "out", "sysbench", "rand_type", "sysbench_options"}
)

var placeholderRE = regexp.MustCompile(`\{([^{}]*)\}`)

func (p *parser) checkCommand(key, what string, argv []string, allowed []string) {
	if argv == nil {
		return
	}
	if len(argv) == 0 || argv[0] == "" {
		p.errorf(key, "%s: the command is empty", what)
		return
	}
	for _, a := range argv {
		for _, m := range placeholderRE.FindAllStringSubmatch(a, -1) {
			ok := false
			for _, n := range allowed {
				ok = ok || m[1] == n
			}
			if !ok {
				p.errorf(key, "%s: unknown placeholder {%s}: use %s", what, m[1], "{"+strings.Join(allowed, "}, {")+"}")
			}
		}
	}
}

func (p *parser) threads(key string, th []int) []int {
	seen := map[int]bool{}
	for _, n := range th {
		if n < 1 || n > maxThreads {
			p.errorf(key, "threads: %d is not a thread count (1 to %d)", n, maxThreads)
		}
		if seen[n] {
			p.errorf(key, "threads: %d is listed twice", n)
		}
		seen[n] = true
	}
	return append([]int(nil), th...)
}

func (p *parser) ops(key, ops string) {
	if ops != "" && !opsRE.MatchString(ops) {
		p.errorf(key, "ops %q: use a status variable (Questions, Com_select, Rows_read, ...) or client.queries, client.transactions, client.events", ops)
	}
}

func (p *parser) steps(plan *Plan, s *rawSteps, r *rawRun, in *rawInsert) {
	set := &stepSet{p: p, plan: plan, insert: in, def: p.runDefaults(r), customs: map[string]*Step{}, have: map[string]bool{}}
	if set.def.profileEvent != "" {
		set.eventKeys = append(set.eventKeys, "run.profile_event")
	}
	for i, c := range s.Custom {
		set.custom(i, c)
	}
	set.selectSteps(s)
	set.exclude(s.Exclude)
	if len(set.selected) == 0 && len(p.errs) == 0 {
		p.errorf("steps", "the plan selects no step: set steps.subset (full, published or fast), list steps in steps.list, or add [[steps.custom]]")
	}
	set.applyDefaults()
	set.overrides(s.Override)
	set.finish()
}

// stepDefaults are the settings of [run] that every step starts from.
type stepDefaults struct {
	threads               []int
	warmup, dur, writeDur time.Duration
	ops                   string
	profile               int
	profileEvent          string
}

// runDefaults reads the step settings of [run] and reports the bad ones.
func (p *parser) runDefaults(r *rawRun) stepDefaults {
	d := stepDefaults{threads: []int{1}, warmup: 5 * time.Second, dur: 60 * time.Second, ops: r.Ops}
	if r.Threads != nil {
		d.threads = p.threads("run.threads", r.Threads)
		if len(d.threads) == 0 {
			p.errorf("run.threads", "threads is empty: list at least one thread count")
		}
	}
	if r.Warmup.set {
		d.warmup = r.Warmup.d
	}
	if r.Duration.set {
		d.dur = r.Duration.d
	}
	d.writeDur = d.dur
	if r.WriteDuration.set {
		d.writeDur = r.WriteDuration.d
	}
	if r.Warmup.set {
		p.checkDuration("run.warmup", "", d.warmup, false)
	}
	if r.Duration.set {
		p.checkDuration("run.duration", "", d.dur, true)
	}
	if r.WriteDuration.set {
		p.checkDuration("run.write_duration", "", d.writeDur, true)
	}
	p.ops("run.ops", r.Ops)
	d.profile, d.profileEvent = r.Profile.hz, p.profileEvent("run.profile_event", r.ProfileEvent)
	return d
}

// stepSet is the plan's steps as they are selected and configured.
type stepSet struct {
	p    *parser
	plan *Plan
	def  stepDefaults

	customs     map[string]*Step // the custom steps by name
	customOrder []string         // their names in the plan's order
	selected    []*Step
	have        map[string]bool // the labels of selected
	eventKeys   []string        // the keys that set a profile event
	insert      *rawInsert      // the [insert] table
}

// custom reads the plan's ith custom step.
func (set *stepSet) custom(i int, c rawCustom) {
	p, def := set.p, set.def
	key := fmt.Sprintf("steps.custom[%d]", i)
	k := func(f string) string { return key + "." + f }
	if c.Name == "" {
		p.errorf(key, "custom step %d has no name", i+1)
		return
	}
	if !labelRE.MatchString(c.Name) {
		p.errorf(k("name"), "custom step %q: use letters, digits and . _ + = - in a name", c.Name)
	}
	if _, err := suite.Lookup(c.Name); err == nil {
		p.errorf(k("name"), "custom step %q has the name of a suite step: choose another", c.Name)
	}
	if suite.IsInsertStep(c.Name) {
		p.errorf(k("name"), "custom step %q has the name of an insert-benchmark step, whose group and tables it would take: choose another", c.Name)
	}
	if set.customs[c.Name] != nil {
		p.errorf(k("name"), "custom step %q is defined twice", c.Name)
		return
	}
	if len(c.Command) == 0 {
		p.errorf(key, "custom step %q has no command", c.Name)
	}
	p.checkCommand(k("command"), fmt.Sprintf("custom step %q", c.Name), c.Command, stepPlaceholders)
	p.passwordOnCommandLine(set.plan, k("command"), c.Name, c.Command)
	st := &Step{Label: c.Name, Command: c.Command, Ops: def.ops, OpsPer: 1, Line: p.lines.line(key)}
	st.Group = suite.GroupOf(c.Name)
	switch suite.Group(c.Group) {
	case "":
	case suite.GroupPoint, suite.GroupRange, suite.GroupWrites:
		st.Group = suite.Group(c.Group)
	default:
		p.errorf(k("group"), "custom step %q: group %q: use point, range or writes", c.Name, c.Group)
	}
	st.Write = st.Group == suite.GroupWrites
	if c.Write != nil {
		st.Write = *c.Write
	}
	if c.Ops != "" {
		st.Ops = c.Ops
		p.ops(k("ops"), c.Ops)
	}
	if st.Ops == "" {
		st.Ops = suite.OpsQuestions
	}
	if p.checkOpsPer(k("ops_per"), fmt.Sprintf("custom step %q", c.Name), c.OpsPer) && c.OpsPer > 0 {
		st.OpsPer = c.OpsPer
	}
	st.Warmup, st.Duration, st.Threads = def.warmup, def.dur, def.threads
	if st.Write {
		st.Duration = def.writeDur
	}
	if c.Warmup.set {
		st.Warmup = c.Warmup.d
		p.checkDuration(k("warmup"), fmt.Sprintf("custom step %q", c.Name), st.Warmup, false)
	}
	if c.Duration.set {
		st.Duration = c.Duration.d
		p.checkDuration(k("duration"), fmt.Sprintf("custom step %q", c.Name), st.Duration, true)
	}
	if c.Threads != nil {
		st.Threads = p.threads(k("threads"), c.Threads)
	}
	st.Profile, st.ProfileEvent = def.profile, def.profileEvent
	if c.Profile.set {
		st.Profile = c.Profile.hz
	}
	if e := p.profileEvent(k("profile_event"), c.ProfileEvent); e != "" {
		st.ProfileEvent = e
		set.eventKeys = append(set.eventKeys, k("profile_event"))
	}
	set.customs[c.Name] = st
	set.customOrder = append(set.customOrder, c.Name)
}

// add selects st unless a step of its label is selected.
func (set *stepSet) add(st *Step) {
	if !set.have[st.Label] {
		set.have[st.Label] = true
		set.selected = append(set.selected, st)
	}
}

// fromSuite selects suite steps, selected by key.
func (set *stepSet) fromSuite(key string, ss []suite.Step) {
	for i := range ss {
		st := &Step{Label: ss[i].Label(), Suite: &ss[i], Group: ss[i].Group, Write: ss[i].Write,
			Ops: ss[i].OpsSource, OpsPer: ss[i].OpsPer, Line: set.p.lines.line(key)}
		if st.Ops == suite.OpsQuestions && set.def.ops != "" {
			st.Ops = set.def.ops
		}
		set.add(st)
	}
}

// selectSteps selects the subset, then the list, then the custom steps not
// listed.
func (set *stepSet) selectSteps(s *rawSteps) {
	p := set.p
	if s.Subset != "" {
		ss, err := suite.Subset(s.Subset)
		if err != nil {
			p.wrapf("steps.subset", err, "steps.subset: %v", err)
		}
		set.fromSuite("steps.subset", ss)
	}
	for _, name := range s.List {
		key := "steps.list=" + name
		if c := set.customs[name]; c != nil {
			c.Line = p.lines.line(key)
			set.add(c)
			continue
		}
		if suite.IsInsertStep(name) || insertLike.MatchString(name) {
			if st := p.insertStep(key, name, set.insert); st != nil {
				set.add(st)
			}
			continue
		}
		ss, err := suite.Lookup(name)
		if err != nil {
			p.wrapf(key, err, "steps.list: %v", err)
			continue
		}
		set.fromSuite(key, ss)
	}
	for _, name := range set.customOrder {
		set.add(set.customs[name])
	}
}

// exclude removes the steps steps.exclude names.
func (set *stepSet) exclude(names []string) {
	for _, name := range names {
		matched := false
		kept := set.selected[:0]
		for _, st := range set.selected {
			if matches(st, name) {
				matched = true
				continue
			}
			kept = append(kept, st)
		}
		set.selected = kept
		if !matched {
			set.unmatched("steps.exclude", "steps.exclude="+name, name)
		}
	}
}

// unmatched reports a name of section that matched no selected step: an
// error when it names no step, else a warning.
func (set *stepSet) unmatched(section, key, name string) {
	if _, err := suite.Lookup(name); err != nil && set.customs[name] == nil {
		set.p.wrapf(key, err, "%s: %v", section, err)
	} else {
		set.plan.Warnings = append(set.plan.Warnings, fmt.Sprintf("%s: %s is not among the selected steps", section, name))
	}
}

// applyDefaults gives the selected suite steps the settings of [run].
func (set *stepSet) applyDefaults() {
	def := set.def
	for _, st := range set.selected {
		if st.Custom() {
			continue
		}
		st.Warmup, st.Duration, st.Threads = def.warmup, def.dur, def.threads
		if st.Write {
			st.Duration = def.writeDur
		}
		st.Profile, st.ProfileEvent = def.profile, def.profileEvent
	}
}

// overrides applies steps.override: a name's first, a label's after, so
// that a label's settings win.
func (set *stepSet) overrides(over map[string]rawOverride) {
	keys := make([]string, 0, len(over))
	for k := range over {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		li, lj := strings.Contains(keys[i], "_range="), strings.Contains(keys[j], "_range=")
		if li != lj {
			return lj
		}
		return keys[i] < keys[j]
	})
	for _, name := range keys {
		set.override(name, over[name])
	}
}

// override applies steps.override.name to the steps it matches.
func (set *stepSet) override(name string, o rawOverride) {
	p := set.p
	key := "steps.override." + name
	k := func(f string) string { return key + "." + f }
	p.ops(k("ops"), o.Ops)
	p.checkOpsPer(k("ops_per"), "steps.override."+name, o.OpsPer)
	if o.Warmup.set {
		p.checkDuration(k("warmup"), "steps.override."+name, o.Warmup.d, false)
	}
	if o.Duration.set {
		p.checkDuration(k("duration"), "steps.override."+name, o.Duration.d, true)
	}
	var th []int
	if o.Threads != nil {
		th = p.threads(k("threads"), o.Threads)
	}
	event := p.profileEvent(k("profile_event"), o.ProfileEvent)
	if event != "" {
		set.eventKeys = append(set.eventKeys, k("profile_event"))
	}
	matched := false
	for _, st := range set.selected {
		if !matches(st, name) {
			continue
		}
		matched = true
		if st.Insert != nil {
			p.errorf(key, "steps.override.%s: %s is an insert-benchmark step: set it in [insert.step.%q] (rows, rows_per_commit, rate, duration)", name, name, name)
			continue
		}
		if o.Warmup.set {
			st.Warmup = o.Warmup.d
		}
		if o.Duration.set {
			st.Duration = o.Duration.d
		}
		if th != nil {
			st.Threads = th
		}
		if o.Ops != "" {
			st.Ops = o.Ops
		}
		if o.OpsPer > 0 && o.OpsPer <= maxOpsPer {
			st.OpsPer = o.OpsPer
		}
		st.ExtraArgs = append(st.ExtraArgs, o.ExtraArgs...)
		if o.Profile.set {
			st.Profile = o.Profile.hz
		}
		if event != "" {
			st.ProfileEvent = event
		}
	}
	if !matched {
		set.unmatched("steps.override", key, name)
	}
}

// finish checks the selected steps and puts them in the plan.
func (set *stepSet) finish() {
	p, plan := set.p, set.plan
	for _, st := range set.selected {
		if st.Line == 0 {
			st.Line = p.lines.line("steps")
		}
		// Negative and zero durations were reported at their keys.
		if st.Duration > 0 && st.Duration < plan.Interval {
			p.errs = append(p.errs, &planError{File: p.file, Line: st.Line,
				Msg: fmt.Sprintf("step %s: duration %v is shorter than the interval %v", st.Label, st.Duration, plan.Interval)})
		}
		if len(st.Threads) == 0 {
			p.errs = append(p.errs, &planError{File: p.file, Line: st.Line, Msg: fmt.Sprintf("step %s runs at no thread count", st.Label)})
		}
		plan.Steps = append(plan.Steps, *st)
	}
	if len(set.eventKeys) > 0 && !plan.Profiled() {
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s is set (line %d) but no step samples: set profile = %d in [run] or for a step",
			lastKey(set.eventKeys[0]), p.lines.line(set.eventKeys[0]), perfevent.DefaultSampleFreq))
	}
}

// checkDuration reports a duration below zero (or zero, when it must be
// positive) or above maxDuration, at its key;
// whose, when not empty, says whose duration it is.
func (p *parser) checkDuration(key, whose string, d time.Duration, positive bool) {
	if whose != "" {
		whose += ": "
	}
	switch {
	case d < 0 || (positive && d == 0):
		what := "zero or more"
		if positive {
			what = "positive"
		}
		p.errorf(key, "%s%s %v must be %s", whose, lastKey(key), d, what)
	case d > maxDuration:
		p.errorf(key, "%s%s %v is longer than perfbench takes (at most %s)", whose, lastKey(key), d, short(maxDuration))
	}
}

// short prints a duration of whole hours as "24h".
func short(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimSuffix(d.String(), "0s"), "0m")
}

// checkOpsPer reports an ops_per that is not a number from 0 (unset) to
// maxOpsPer, at its key, and says whether it is fine.
func (p *parser) checkOpsPer(key, whose string, v float64) bool {
	if v >= 0 && v <= maxOpsPer {
		return true
	}
	p.errorf(key, "%s: ops_per %v must be a positive number, at most %g", whose, v, float64(maxOpsPer))
	return false
}

// checkSize reports a plan whose measurements are more, or take longer,
// than perfbench runs, before anything expands them.
func (p *parser) checkSize(plan *Plan, repeatsSet bool) {
	if plan.Repeats < 1 || plan.Repeats > maxRepeats {
		return
	}
	per, window := 0, 0.0
	for _, st := range plan.Steps {
		per += len(st.Threads)
		window += float64(len(st.Threads)) * (st.Warmup + st.Duration).Seconds()
	}
	runs := float64(len(plan.Versions)) * float64(plan.Repeats)
	key := "steps"
	if repeatsSet {
		key = "run.repeats"
	}
	switch n := float64(per) * runs; {
	case n > maxMeasurements:
		p.errorf(key, "the plan has %.0f measurements (repeats × versions × steps × thread counts), at most %d: fewer "+
			"repeats, steps or thread counts", n, maxMeasurements)
	case window*runs > maxPlanTime.Seconds():
		p.errorf(key, "the plan's warm-ups and windows alone take %.0f days, at most %.0f: fewer repeats, steps or thread counts, or shorter durations",
			window*runs/86400, maxPlanTime.Hours()/24)
	}
}

// passwordOnCommandLine warns of a custom step that gives a password the
// plan sets to a command as an argument, where every local user can read it
// (/proc/PID/cmdline): in its own argv, or in a shell script (at any depth
// of shells) as an argument of a command (mariadb -p'{password}'). In a
// shell script {password} is an environment variable, which the script can
// hand on in the environment (MYSQL_PWD={password} mariadb).
func (p *parser) passwordOnCommandLine(plan *Plan, key, name string, argv []string) {
	if !p.passwordSet {
		return
	}
	script := scriptIndex(argv)
	for i, a := range argv {
		switch {
		case i != script && strings.Contains(a, "{password}"):
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("custom step %s (line %d) puts {password} on a command line, where every local user can read it while it runs: give sysbench --config-file={sysbench_options} instead; in a shell script it stays in the environment (sh -c 'MYSQL_PWD={password} mariadb ...')", name, p.lines.line(key)))
			return
		case i == script && scriptShowsPassword(a):
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("custom step %s (line %d): its script gives {password} to a command as an argument, where every local user can read it while it runs: set it in the command's environment instead (MYSQL_PWD={password} mariadb ..., sysbench --config-file={sysbench_options})", name, p.lines.line(key)))
			return
		}
	}
}

// profileEvent checks a profile_event value: one event, as perf -e names
// it; its existence on this machine is checked when the plan runs.
func (p *parser) profileEvent(key, e string) string {
	e = strings.TrimSpace(e)
	if strings.ContainsAny(e, ",{}") {
		p.errorf(key, "profile_event %q: name one event to sample (cpu-clock, cycles, ...)", e)
	}
	return e
}

// matches reports whether a name or label designates a step.
func matches(st *Step, name string) bool {
	if st.Label == name {
		return true
	}
	return st.Suite != nil && st.Suite.Name == name
}
