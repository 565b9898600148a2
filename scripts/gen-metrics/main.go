// Command gen-metrics writes perfevent/metric/tables.go: perfbench's metric
// sets per CPU model, taken from perf's pmu-events tables in two Linux
// source trees.
//
//	go run ./scripts/gen-metrics -linux61 DIR61 -linux612 DIR612 -o perfevent/metric/tables.go
//
// DIR61 and DIR612 are unpacked Linux source trees (each with its Makefile
// and tools/perf/pmu-events/arch). perfbench's tables come from Debian's
// kernel source packages, whose perf is the one on the machines perfbench
// is developed on:
//
//	apt-get download linux-source-6.1=6.1.187-1       # bookworm(-security)
//	dpkg-deb -x linux-source-6.1_6.1.187-1_all.deb deb61
//	tar -xJf deb61/usr/src/linux-source-6.1.tar.xz linux-source-6.1/Makefile linux-source-6.1/tools/perf/pmu-events
//
// and the same for linux-source-6.12=6.12.117-1 (Debian 13, trixie). Nothing of
// those trees is committed; the generated file records the release and
// folder of every set.
//
// Intel sets and the Zen 2 and Zen 3 sets come from Linux 6.1, whose perf
// (Debian 12's) prints the same definitions, so the tests compare them with
// it. Zen 4 and Zen 5 pipeline utilization and every Arm Neoverse set come
// from Linux 6.12: perf 6.1 has no Neoverse metrics and maps Zen 4 to its
// Zen 3 tables. CPUs are recognised with the mapfile.csv of the release a
// vendor's sets come from (AMD and Arm: 6.12).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/perfevent/metric"
)

// spec chooses what a set takes from a model's tables: the metric groups
// that are its TopDown levels and the architectural metrics by name (those
// the tables have, in this order).
type spec struct {
	release string // "6.1" or "6.12": which source tree
	dir     string // folder under tools/perf/pmu-events/arch
	l1, l2  string // metric groups of level 1 and level 2
	arch    []string
	note    string
}

// Architectural metrics by the names each vendor's tables use.
var (
	intelArch = []string{"IPC", "L1MPKI", "L2MPKI", "L3MPKI", "IpMispredict",
		"Page_Walks_Utilization", "itlb_mpi", "itlb_2nd_level_mpi", "dtlb_load_mpi",
		"dtlb_2nd_level_load_mpi", "dtlb_store_mpi", "dtlb_2nd_level_store_mpi"}
	amdArch = []string{"branch_misprediction_ratio", "branch_misprediction_rate",
		"ic_fetch_miss_ratio", "op_cache_fetch_miss_ratio",
		"all_l1_data_cache_fills", "all_l1_data_cache_fills_pti",
		"all_l2_cache_misses", "all_l2_cache_misses_pti",
		"l1_itlb_misses", "l1_itlb_misses_pti", "l2_itlb_misses", "l2_itlb_misses_pti",
		"l1_dtlb_misses", "l1_dtlb_misses_pti", "l2_dtlb_misses", "l2_dtlb_misses_pti"}
	armArch = []string{"ipc", "l1d_cache_mpki", "l1i_cache_mpki", "l2_cache_mpki",
		"ll_cache_read_mpki", "branch_mpki", "branch_misprediction_ratio",
		"dtlb_mpki", "itlb_mpki"}
)

const topdownNote = "topdown-* events count only in one group led by slots (cpu/slots/ first)"

var specs = []spec{
	{release: "6.1", dir: "x86/sapphirerapids", l1: "TopdownL1", l2: "TopdownL2", arch: intelArch, note: topdownNote},
	{release: "6.1", dir: "x86/icelakex", l1: "TopdownL1", l2: "TopdownL2", arch: intelArch, note: topdownNote},
	{release: "6.1", dir: "x86/icelake", l1: "TopdownL1", l2: "TopdownL2", arch: intelArch, note: topdownNote},
	{release: "6.1", dir: "x86/tigerlake", l1: "TopdownL1", l2: "TopdownL2", arch: intelArch, note: topdownNote},
	{release: "6.1", dir: "x86/cascadelakex", l1: "TopdownL1", l2: "TopdownL2", arch: intelArch},
	{release: "6.1", dir: "x86/skylakex", l1: "TopdownL1", l2: "TopdownL2", arch: intelArch},
	{release: "6.1", dir: "x86/skylake", l1: "TopdownL1", l2: "TopdownL2", arch: intelArch},
	{release: "6.1", dir: "x86/broadwellx", l1: "TopdownL1", l2: "TopdownL2", arch: intelArch},
	{release: "6.1", dir: "x86/haswellx", l1: "TopdownL1", l2: "TopdownL2", arch: intelArch},
	{release: "6.1", dir: "x86/amdzen2", arch: amdArch},
	{release: "6.1", dir: "x86/amdzen3", arch: amdArch},
	{release: "6.12", dir: "x86/amdzen4", l1: "PipelineL1", l2: "PipelineL2", arch: amdArch},
	{release: "6.12", dir: "x86/amdzen5", l1: "PipelineL1", l2: "PipelineL2", arch: amdArch},
	{release: "6.12", dir: "arm64/arm/neoverse-n1", l1: "Cycle_Accounting", arch: armArch},
	{release: "6.12", dir: "arm64/arm/neoverse-v1", l1: "TopdownL1", arch: armArch},
	{release: "6.12", dir: "arm64/arm/neoverse-n2-v2", l1: "TopdownL1", arch: armArch},
}

// mapRelease is the release whose mapfile.csv recognises each vendor's CPUs.
var mapRelease = map[string]string{"GenuineIntel": "6.1", "AuthenticAMD": "6.12", "arm64": "6.12"}

func main() {
	dirs := map[string]*string{
		"6.1":  flag.String("linux61", "", "unpacked Linux 6.1 source tree (Debian linux-source-6.1)"),
		"6.12": flag.String("linux612", "", "unpacked Linux 6.12 source tree (Debian linux-source-6.12)"),
	}
	out := flag.String("o", "perfevent/metric/tables.go", "file to write")
	flag.Parse()
	if err := run(dirs, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen-metrics:", err)
		os.Exit(1)
	}
}

type tree struct {
	dir     string // the source tree
	release string // full release, "6.1.187"
	arch    string // .../tools/perf/pmu-events/arch
}

func run(dirs map[string]*string, out string) error {
	trees := map[string]*tree{}
	for short, d := range dirs {
		if *d == "" {
			return fmt.Errorf("-linux%s is required: the unpacked Linux %s source tree (see go doc ./scripts/gen-metrics)", strings.ReplaceAll(short, ".", ""), short)
		}
		rel, err := release(*d)
		if err != nil {
			return err
		}
		if rel != short && !strings.HasPrefix(rel, short+".") {
			return fmt.Errorf("%s is Linux %s, not %s", *d, rel, short)
		}
		trees[short] = &tree{dir: *d, release: rel, arch: filepath.Join(*d, "tools/perf/pmu-events/arch")}
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by scripts/gen-metrics from perf's pmu-events tables; DO NOT EDIT.\n\npackage metric\n\n")
	fmt.Fprintf(&b, "var sets = []%s{\n", reflect.TypeFor[metric.Set]().Name())
	versions := map[string]string{} // set name -> mapfile version
	var entries []string
	for _, release := range []string{"6.1", "6.12"} {
		es, vs, err := mapEntries(trees[release], release)
		if err != nil {
			return err
		}
		for k, v := range vs {
			if specRelease(k) == release {
				versions[k] = v
			}
		}
		entries = append(entries, es...)
	}
	for _, sp := range specs {
		s, err := buildSet(trees[sp.release], sp, versions[path(sp.dir)])
		if err != nil {
			return fmt.Errorf("set %s: %w", sp.dir, err)
		}
		b.WriteString(s)
	}
	b.WriteString("}\n\nvar cpuMap = []mapEntry{\n")
	for _, e := range entries {
		b.WriteString(e)
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return fmt.Errorf("format generated code: %w", err)
	}
	return os.WriteFile(out, src, 0o644)
}

func path(dir string) string { return filepath.Base(dir) }

func specRelease(name string) string {
	for _, sp := range specs {
		if path(sp.dir) == name {
			return sp.release
		}
	}
	return ""
}

func release(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "Makefile"))
	if err != nil {
		return "", fmt.Errorf("read Linux release: %w", err)
	}
	v := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, val, ok := strings.Cut(line, "=")
		if ok {
			v[strings.TrimSpace(k)] = strings.TrimSpace(val)
		}
		if len(v) > 10 {
			break
		}
	}
	if v["VERSION"] == "" || v["PATCHLEVEL"] == "" {
		return "", fmt.Errorf("%s/Makefile has no VERSION and PATCHLEVEL: not a Linux source tree", dir)
	}
	r := v["VERSION"] + "." + v["PATCHLEVEL"]
	if v["SUBLEVEL"] != "" && v["SUBLEVEL"] != "0" {
		r += "." + v["SUBLEVEL"]
	}
	return r, nil
}

// mapEntries reads the core lines of mapfile.csv for the vendors this
// release recognises, in mapfile order, and the version of every line's
// tables.
func mapEntries(t *tree, release string) ([]string, map[string]string, error) {
	var out []string
	versions := map[string]string{}
	for _, arch := range []string{"x86", "arm64"} {
		f, err := os.Open(filepath.Join(t.arch, arch, "mapfile.csv"))
		if err != nil {
			return nil, nil, fmt.Errorf("read mapfile: %w", err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "Family-model") {
				continue
			}
			cols := strings.Split(line, ",")
			if len(cols) < 4 || cols[3] != "core" {
				continue
			}
			name := path(cols[2])
			vendor := "arm64"
			if arch == "x86" {
				vendor, _, _ = strings.Cut(cols[0], "-")
			}
			versions[name] = cols[1]
			// Every line of the vendor's mapfile is kept, also those of
			// models perfbench has no set for: perf takes the first line
			// that matches, and a later line must not catch their CPUs.
			if mapRelease[vendor] != release {
				continue
			}
			out = append(out, fmt.Sprintf("{Arch: %q, CPUID: %q, Set: %q, Release: %q},\n", arch, cols[0], name, t.release))
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, nil, err
		}
	}
	return out, versions, nil
}

// entry is one object of a pmu-events JSON file.
type entry map[string]string

func (e entry) metric() string { return e["MetricName"] }

// loadModel reads every JSON file of a model folder, resolving ArchStdEvent
// references against the arch's top-level files as perf's jevents.py does
// (the model's own fields win).
func loadModel(t *tree, dir string) (events map[string]entry, metrics []entry, err error) {
	std := map[string]entry{}
	archDir := filepath.Join(t.arch, strings.SplitN(dir, "/", 2)[0])
	tops, _ := filepath.Glob(filepath.Join(archDir, "*.json"))
	for _, f := range tops {
		es, err := readJSON(f)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range es {
			if n := e["EventName"]; n != "" {
				std[strings.ToLower(n)] = e
			}
			if n := e.metric(); n != "" {
				std[strings.ToLower(n)] = e
			}
		}
	}
	files, err := filepath.Glob(filepath.Join(t.arch, dir, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, nil, fmt.Errorf("no JSON files in %s", filepath.Join(t.arch, dir))
	}
	sort.Strings(files)
	events = map[string]entry{}
	for name, e := range std {
		if e["EventName"] != "" {
			events[name] = e
		}
	}
	for _, f := range files {
		es, err := readJSON(f)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range es {
			if a := e["ArchStdEvent"]; a != "" {
				s, ok := std[strings.ToLower(a)]
				if !ok {
					return nil, nil, fmt.Errorf("%s: ArchStdEvent %s is not in %s/*.json", f, a, archDir)
				}
				for k, v := range s {
					if _, own := e[k]; !own {
						e[k] = v
					}
				}
			}
			e["_file"] = filepath.Base(f)
			if n := e["EventName"]; n != "" {
				events[strings.ToLower(n)] = e
			}
			if e.metric() != "" {
				metrics = append(metrics, e)
			}
		}
	}
	return events, metrics, nil
}

func readJSON(file string) ([]entry, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var raw []map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	out := make([]entry, len(raw))
	for i, r := range raw {
		out[i] = entry{}
		for k, v := range r {
			switch v := v.(type) {
			case string:
				out[i][k] = v
			case float64:
				out[i][k] = strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
	}
	return out, nil
}

func inGroup(e entry, g string) bool {
	for _, x := range strings.Split(e["MetricGroup"], ";") {
		if x == g {
			return true
		}
	}
	return false
}

type chosen struct {
	e     entry
	level metric.Level
	group string
	expr  *metric.Expr
}

func buildSet(t *tree, sp spec, version string) (string, error) {
	events, metrics, err := loadModel(t, sp.dir)
	if err != nil {
		return "", err
	}
	ms := newMetricSet(metrics)
	if err := ms.choose(sp, metrics); err != nil {
		return "", err
	}
	sort.SliceStable(ms.picked, func(i, j int) bool {
		li, lj := order(ms.picked[i].level), order(ms.picked[j].level)
		if li != lj {
			return li < lj
		}
		return ms.picked[i].e.metric() < ms.picked[j].e.metric()
	})
	return writeSet(t, sp, version, ms.picked, events)
}

// metricSet is the metrics of a model and those chosen for a set.
type metricSet struct {
	byName map[string]entry // the model's metrics by lower-case name
	twice  map[string]bool  // defined twice with different expressions
	picked []*chosen
	have   map[string]*chosen // picked by lower-case name
}

func newMetricSet(metrics []entry) *metricSet {
	ms := &metricSet{byName: map[string]entry{}, twice: map[string]bool{}, have: map[string]*chosen{}}
	for _, m := range metrics {
		key := strings.ToLower(m.metric())
		if d, dup := ms.byName[key]; dup && d["MetricExpr"] != m["MetricExpr"] {
			ms.twice[key] = true
		}
		ms.byName[key] = m
	}
	return ms
}

func (ms *metricSet) isMetric(n string) bool { _, ok := ms.byName[strings.ToLower(n)]; return ok }

// add picks metric e at level in group, or raises the level of a metric
// picked as a helper.
func (ms *metricSet) add(e entry, level metric.Level, group string) error {
	key := strings.ToLower(e.metric())
	if ms.twice[key] {
		return fmt.Errorf("metric %s is defined twice, differently", e.metric())
	}
	if c := ms.have[key]; c != nil {
		if c.level == metric.Helper && level != metric.Helper {
			c.level, c.group = level, group
		}
		return nil
	}
	x, err := metric.Parse(e["MetricExpr"], ms.isMetric)
	if err != nil {
		return fmt.Errorf("metric %s: %w", e.metric(), err)
	}
	x.Walk(func(n *metric.Expr) {
		if n.Op == metric.OpMetric {
			n.Name = ms.byName[strings.ToLower(n.Name)].metric()
		}
	})
	c := &chosen{e: e, level: level, group: group, expr: x}
	ms.have[key] = c
	ms.picked = append(ms.picked, c)
	return nil
}

// choose picks the set's top-down metrics, its architectural ones and the
// metrics they refer to.
func (ms *metricSet) choose(sp spec, metrics []entry) error {
	for _, m := range metrics {
		var err error
		switch {
		case sp.l1 != "" && inGroup(m, sp.l1):
			err = ms.add(m, metric.TopdownL1, sp.l1)
		case sp.l2 != "" && inGroup(m, sp.l2):
			err = ms.add(m, metric.TopdownL2, sp.l2)
		}
		if err != nil {
			return err
		}
	}
	if sp.l1 != "" && len(ms.picked) == 0 {
		return fmt.Errorf("no metric in group %s", sp.l1)
	}
	for _, n := range sp.arch {
		if m, ok := ms.byName[strings.ToLower(n)]; ok {
			if err := ms.add(m, metric.Architectural, m["MetricGroup"]); err != nil {
				return err
			}
		}
	}
	// Metrics the chosen ones refer to, transitively.
	for i := 0; i < len(ms.picked); i++ {
		var refs []string
		ms.picked[i].expr.Walk(func(n *metric.Expr) {
			if n.Op == metric.OpMetric {
				refs = append(refs, n.Name)
			}
		})
		for _, r := range refs {
			if err := ms.add(ms.byName[strings.ToLower(r)], metric.Helper, ms.byName[strings.ToLower(r)]["MetricGroup"]); err != nil {
				return err
			}
		}
	}
	return nil
}

// eventNames is the events the picked metrics read, sorted.
func eventNames(picked []*chosen) []string {
	names := map[string]bool{}
	for _, c := range picked {
		c.expr.Walk(func(n *metric.Expr) {
			switch n.Op {
			case metric.OpEvent, metric.OpSourceCount, metric.OpHasEvent:
				names[n.Name] = true
			}
		})
	}
	var evNames []string
	for n := range names {
		evNames = append(evNames, n)
	}
	sort.Strings(evNames)
	return evNames
}

// writeSet is the Go source of a set of the picked metrics.
func writeSet(t *tree, sp spec, version string, picked []*chosen, events map[string]entry) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "{\nName: %q,\nSource: %s{Release: %q, Dir: %q, Version: %q},\n", path(sp.dir), setField("Source"), t.release, sp.dir, version)
	if sp.note != "" {
		fmt.Fprintf(&b, "Note: %q,\n", sp.note)
	}
	fmt.Fprintf(&b, "Metrics: []%s{\n", setField("Metrics"))
	for _, c := range picked {
		scale, unit := scaleUnit(c.e["ScaleUnit"])
		fmt.Fprintf(&b, "{Name: %q, Level: %s, Group: %q, Scale: %s, Unit: %q, File: %q,\nExpr: %#v},\n",
			c.e.metric(), levelName(c.level), c.group, strconv.FormatFloat(scale, 'g', -1, 64), unit, c.e["_file"], c.expr)
	}
	fmt.Fprintf(&b, "},\nEvents: []%s{\n", setField("Events"))
	for _, n := range eventNames(picked) {
		spelling, why, err := encode(n, events, strings.HasPrefix(sp.dir, "arm64"))
		if err != nil {
			return "", err
		}
		if why != "" {
			fmt.Fprintf(&b, "{Name: %q, Why: %q},\n", n, why)
		} else {
			fmt.Fprintf(&b, "{Name: %q, Spelling: %q},\n", n, spelling)
		}
	}
	b.WriteString("},\n},\n")
	return b.String(), nil
}

// setField is the name of the type of metric.Set's field f (of its
// elements, for a slice), as tables.go spells it inside package metric. It
// is read from the type rather than written here so that the output still
// compiles when scripts/unexport has unexported the type (Source → source).
// The expressions' operators are spelled by metric's Expr.GoString.
// TestTablesSpelling checks both against tables.go.
func setField(f string) string {
	sf, _ := reflect.TypeFor[metric.Set]().FieldByName(f)
	t := sf.Type
	if t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return t.Name()
}

func order(l metric.Level) int {
	if l == metric.Helper {
		return 99
	}
	return int(l)
}

func levelName(l metric.Level) string {
	return map[metric.Level]string{metric.Helper: "Helper", metric.TopdownL1: "TopdownL1",
		metric.TopdownL2: "TopdownL2", metric.Architectural: "Architectural"}[l]
}

var scaleRE = regexp.MustCompile(`^([0-9.eE+-]+)\s*(.*)$`)

// scaleUnit splits a ScaleUnit such as "100%" or "1MPKI".
func scaleUnit(s string) (float64, string) {
	m := scaleRE.FindStringSubmatch(s)
	if m == nil {
		return 1, s
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 1, s
	}
	return v, m[2]
}

// genericEvents are perf's generic event names the tables use as they are.
var genericEvents = map[string]bool{"instructions": true, "cycles": true, "cpu-cycles": true,
	"branches": true, "branch-misses": true}

// fixedIntel are the events perf's jevents.py encodes by name rather than
// from the JSON (tools/perf/pmu-events/jevents.py, real_event).
var fixedIntel = map[string][]string{
	"inst_retired.any":            {"event=0xc0"},
	"inst_retired.any_p":          {"event=0xc0"},
	"cpu_clk_unhalted.ref":        {"event=0x0", "umask=0x03"},
	"cpu_clk_unhalted.thread":     {"event=0x3c"},
	"cpu_clk_unhalted.core":       {"event=0x3c"},
	"cpu_clk_unhalted.thread_any": {"event=0x3c", "any=1"},
}

var errNoEncoding = errors.New("no encoding")

// encode returns how perfbench spells an event the expressions name, or
// why it has no spelling.
func encode(name string, events map[string]entry, arm bool) (spelling, why string, err error) {
	switch {
	case genericEvents[name]:
		return name, "", nil
	case name == "duration_time":
		return "", "the window's length: perfbench measures it, it is not a counter", nil
	case name == "msr@tsc@":
		return "msr/tsc/", "", nil
	case !arm && (strings.HasPrefix(name, "topdown-") || name == "slots"):
		return "cpu/" + name + "/", "", nil // the core PMU's sysfs alias
	}
	if pmu, rest, ok := strings.Cut(name, "@"); ok && strings.HasSuffix(rest, "@") {
		terms := strings.Split(strings.TrimSuffix(rest, "@"), ",")
		base, err := jsonTerms(terms[0], events, arm)
		if err != nil {
			return "", "", fmt.Errorf("event %s: %w", name, err)
		}
		return "cpu/" + strings.Join(override(base, terms[1:]), ",") + "/", "", checkPMU(pmu, name)
	}
	terms, err := jsonTerms(name, events, arm)
	if err != nil {
		return "", "", fmt.Errorf("event %s: %w", name, err)
	}
	if arm {
		code, err := strconv.ParseUint(strings.TrimPrefix(terms[0], "event="), 0, 64)
		if err != nil || len(terms) != 1 {
			return "", "", fmt.Errorf("event %s: arm event with terms %v", name, terms)
		}
		return fmt.Sprintf("r%x", code), "", nil
	}
	return "cpu/" + strings.Join(terms, ",") + "/", "", nil
}

func checkPMU(pmu, name string) error {
	if pmu != "cpu" {
		return fmt.Errorf("event %s: PMU %s is not the core PMU", name, pmu)
	}
	return nil
}

// jsonTerms are the perf terms of a named event, built from its JSON as
// jevents.py builds them (without the sampling period).
func jsonTerms(name string, events map[string]entry, arm bool) ([]string, error) {
	if !arm {
		if t, ok := fixedIntel[strings.ToLower(name)]; ok {
			return t, nil
		}
	}
	e, ok := events[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("%w: not in the model's event JSON", errNoEncoding)
	}
	if e["Unit"] != "" {
		return nil, fmt.Errorf("%w: an uncore event (Unit %s)", errNoEncoding, e["Unit"])
	}
	var c uint64 // fixed-counter events have no EventCode: jevents.py writes event=0
	if code, _, _ := strings.Cut(e["EventCode"], ","); code != "" {
		var err error
		if c, err = strconv.ParseUint(code, 0, 64); err != nil {
			return nil, fmt.Errorf("EventCode %q: %w", code, err)
		}
	}
	terms := []string{"event=" + llx(c)}
	for _, f := range []struct{ key, term string }{
		{"AnyThread", "any"}, {"PortMask", "ch_mask"}, {"CounterMask", "cmask"},
		{"EdgeDetect", "edge"}, {"FCMask", "fc_mask"}, {"Invert", "inv"}, {"UMask", "umask"},
	} {
		if v, ok := e[f.key]; ok && v != "0" {
			terms = append(terms, f.term+"="+v)
		}
	}
	if msr := e["MSRIndex"]; msr != "" {
		first, _, _ := strings.Cut(msr, ",")
		n, err := strconv.ParseUint(strings.TrimSpace(first), 0, 64)
		if err != nil {
			return nil, fmt.Errorf("MSRIndex %q: %w", msr, err)
		}
		term, ok := map[uint64]string{0x3f6: "ldlat", 0x1a6: "offcore_rsp", 0x1a7: "offcore_rsp", 0x3f7: "frontend"}[n]
		if !ok {
			return nil, fmt.Errorf("MSRIndex %q is none perf knows", msr)
		}
		terms = append(terms, term+"="+e["MSRValue"])
	}
	return terms, nil
}

// override replaces or adds the terms of more (key=value) in base.
func override(base, more []string) []string {
	out := append([]string(nil), base...)
	for _, m := range more {
		k, _, _ := strings.Cut(m, "=")
		replaced := false
		for i, b := range out {
			if bk, _, _ := strings.Cut(b, "="); bk == k {
				out[i], replaced = m, true
			}
		}
		if !replaced {
			out = append(out, m)
		}
	}
	return out
}

// llx prints a number as perf's jevents.py 6.1 does (%#llx, 0 for zero).
func llx(v uint64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%#x", v)
}
