package demo

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/internal/run/plan"
)

// version is a column of the demo's tables: a server perfbench starts.
type version struct {
	Label string
	// Basedir is plan.Installed or an unpacked release's usr/ folder.
	Basedir string
	Options []string
	// About says what the version is, in a comment above it in the plan.
	About string
	// AAOf is the label of the version this one measures again (the A/A
	// pair whose rQPS is the demo's noise floor).
	AAOf string
}

// aaSuffix is added to the base's label for its A/A twin.
const aaSuffix = "-aa"

// withTwin appends the A/A twin of the base to vs: the same server under a
// second label, whose rQPS against the base is the noise floor the report
// prints next to the other versions'.
func withTwin(vs []version, base string) []version {
	for _, v := range vs {
		if v.Label == base {
			twin := v
			twin.Label, twin.AAOf = base+aaSuffix, base
			twin.Options = append([]string(nil), v.Options...)
			twin.About = "The base again, under a second label (an A/A pair): its rQPS against " + base + " would be 1.00 " +
				"without noise, and the report prints it as the floor next to the other versions"
			return append(vs, twin)
		}
	}
	return vs
}

// serverOptions are the options every server of the demo starts with: a
// buffer pool that holds the tables (so reads do not wait for the disk), and
// the performance schema, from which perfbench names the role of each
// server thread (connection, InnoDB IO, purge, ...) in the per-role tables.
var serverOptions = []string{"innodb_buffer_pool_size=256M", "max_connections=100", "performance_schema=ON"}

// variantOptions turn on the configuration variant: the binary log, synced
// at every commit. Each commit then writes and fsyncs the binary log as well
// as the redo log: writes cost more CPU, context switches and disk writes
// per statement, while reads are unaffected. On the development machine it
// halves the QPS of update-index.
var variantOptions = []string{"log_bin=mysql-bin", "sync_binlog=1", "server_id=1"}

// variantSuffix is added to the installed release's label for the variant.
const variantSuffix = "-binlog"

// versions returns the demo's versions, and the base the others are
// compared to: the older of the two releases, the newer, then the installed
// release with the configuration variant, then the base again under a second
// label (its A/A twin). installed is the installed
// server's release ("10.11.19"); other, when not nil, the unpacked one.
func versions(installed string, other *release) (vs []version, base string) {
	inst := version{Label: installed, Basedir: plan.Installed,
		Options: append([]string(nil), serverOptions...),
		About:   "MariaDB " + installed + ", the release installed on this machine"}
	variant := version{Label: installed + variantSuffix, Basedir: plan.Installed,
		Options: append(append([]string(nil), serverOptions...), variantOptions...),
		About:   "MariaDB " + installed + " with the binary log synced at every commit (sync_binlog=1): a known cost on writes, none on reads"}
	if other == nil {
		return withTwin([]version{inst, variant}, installed), installed
	}
	o := version{Label: other.Upstream, Basedir: other.Basedir,
		Options: append([]string(nil), serverOptions...),
		About:   fmt.Sprintf("MariaDB %s, %s %s unpacked (not installed) in %s", other.Upstream, serverPackage, other.Version, other.Dir)}
	if compareVersions(other.Upstream, installed) < 0 {
		return withTwin([]version{o, inst, variant}, o.Label), o.Label
	}
	return withTwin([]version{inst, o, variant}, inst.Label), inst.Label
}

// settings are the size of the demo's plan.
type settings struct {
	Steps   []string
	Threads []int
	// OneThread are steps of Steps that run at one client thread only.
	OneThread []string
	Repeats   int
	Warmup    string
	Duration  string
	// TableSize is the rows of the one sysbench table.
	TableSize int
}

// quickSettings is what CI can afford: three steps (a point query, a range
// query, a write), one client thread, two repeats, 2-second windows: 24
// measurements of about 6 s each with three versions and the base's A/A
// twin, about 3 minutes on a 2-core VM.
var quickSettings = settings{
	Steps:     []string{"point-query", "read-only_range=100", "update-index"},
	Threads:   []int{1},
	Repeats:   2,
	Warmup:    "1s",
	Duration:  "2s",
	TableSize: 10000,
}

// fullSettings is the demo proper: two point, a range and a write step at 1
// and 2 client threads (random-points, the slowest, at 1 only), three
// interleaved repeats, 3-second windows: 84 measurements of about 7 s each
// with three versions and the base's A/A twin, about 11 minutes on a 2-core
// VM.
var fullSettings = settings{
	Steps:     []string{"point-query", "random-points_range=100", "read-only_range=100", "update-index"},
	Threads:   []int{1, 2},
	OneThread: []string{"random-points_range=100"},
	Repeats:   3,
	Warmup:    "1s",
	Duration:  "3s",
	TableSize: 100000,
}

// events are the counters the demo asks for: the hardware events of the
// published per-query tables (cycles and instructions in one group, so that
// IPC compares like with like), then the software events. A machine without
// a hardware PMU (most VMs) counts the software ones and reports the others
// as not supported (n/a): never a number that was not measured.
var events = []string{
	"{cycles,instructions}", "{cache-references,cache-misses}", "{branches,branch-misses}",
	"task-clock", "context-switches", "cpu-migrations", "page-faults",
}

// planTOML writes the demo's plan: the versions, the base, and the
// settings, as a commented plan file that perfbench run reads.
func planTOML(vs []version, base string, s settings, quick bool) []byte {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	comment := func(text string) {
		for _, l := range wrap(text, 76) {
			w("# %s\n", l)
		}
	}
	kind := "perfbench demo"
	if quick {
		kind = "perfbench demo --quick"
	}
	w("# The plan %s ran: MariaDB releases side by side and one\n", kind)
	w("# configuration with a known cost, each server started by perfbench on\n")
	w("# its own data directory, socket and port. Run it again into another\n")
	w("# folder with\n")
	w("#\n#   perfbench run plan.toml --out DIR\n#\n")
	w("# Windows this short show every part of perfbench at work; numbers to\n")
	w("# publish need windows of minutes (see examples/plans/published.toml).\n\n")
	w("name = %s\n", q("demo"))
	w("# The other columns are relative to the base: the older release.\n")
	w("base = %s\n\n", q(base))

	labels := make([]string, len(vs))
	for i, v := range vs {
		labels[i] = v.Label
	}
	w("[run]\n")
	comment(fmt.Sprintf("Repeats interleave the versions (%s, %s, ...), so drift over the run spreads over all of them.", strings.Join(labels, ", "), labels[0]))
	w("repeats = %d\n", s.Repeats)
	w("threads = %s\n", intList(s.Threads))
	w("# The load runs for the warm-up before the window opens; the window is\n")
	w("# what is measured, with a per-second series inside it.\n")
	w("warmup = %s\n", q(s.Warmup))
	w("duration = %s\n", q(s.Duration))
	w("interval = %s\n", q("1s"))
	comment("Every version's server runs from the start, and each step's versions are measured together (compare = " +
		"\"auto\", the default): in duet (all at once, each on CPUs of its own, the CPUs passed on every slice) where the " +
		"machine has CPUs for every version, else in slices (one version's load at a time, switching every second in a random " +
		"order). What the host does to the machine's speed then falls on every version alike, and each ratio comes from pairs of slices measured seconds apart.")
	w("compare = %s\n", q(plan.CompareAuto))
	w("slice = %s\n", q("1s"))
	w("# Hardware events first (n/a where the machine has no PMU), then the\n")
	w("# software events every Linux machine counts.\n")
	w("events = %s\n\n", strList(events))

	w("[data]\n")
	w("# One table that fits in the buffer pool.\n")
	w("tables = 1\n")
	w("table_size = %d\n\n", s.TableSize)

	w("[steps]\n")
	w("# Point and range queries, then writes (the reads of the next repeat get\n")
	w("# the post-write flush first).\n")
	w("list = %s\n\n", strList(s.Steps))
	for _, st := range s.OneThread {
		w("[steps.override.%s]\n", q(st))
		comment("Each of its statements reads 100 rows by key: the slowest step, and one client thread is enough to see it.")
		w("threads = [1]\n\n")
	}
	comment("Every version starts with a buffer pool that holds the table, and with the performance schema on: perfbench " +
		"names the role of each server thread from it (connection, InnoDB IO, purge, ...).")
	for _, v := range vs {
		w("\n")
		comment(v.About)
		w("[[version]]\n")
		w("label = %s\n", q(v.Label))
		w("basedir = %s\n", q(v.Basedir))
		w("options = %s\n", strList(v.Options))
		if v.AAOf != "" {
			w("aa_of = %s\n", q(v.AAOf))
		}
	}
	return b.Bytes()
}

// wrap splits text into lines of at most width bytes at spaces (a longer
// word stays whole).
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// q quotes s as a TOML basic string.
func q(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func strList(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = q(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func intList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
