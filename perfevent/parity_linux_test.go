package perfevent

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/testenv"
)

// perfAttr is one perf_event_attr dump of perf stat -vv. Fields perf leaves
// out are 0.
type perfAttr map[string]uint64

// perfAttrs runs perf stat -vv -e names -- true and returns, for each name
// in order, the first perf_event_attr perf built for it (before any
// fallback). perf prints the attr even when the open fails, so this works
// on machines without a hardware PMU.
func perfAttrs(t *testing.T, perf string, names []string) []perfAttr {
	t.Helper()
	out, err := exec.Command(perf, "stat", "-vv", "-e", strings.Join(names, ","), "--", "true").CombinedOutput()
	if err != nil {
		t.Fatalf("perf stat -vv -e %s...: %v\n%s", names[0], err, lastLines(out, 20))
	}
	// An event ends with a successful open ("... = FD") or perf's
	// "NAME event is not supported by the kernel."; a dump that comes
	// before that is perf retrying the same event with fewer attributes.
	var attrs []perfAttr
	var cur perfAttr
	inDump, ended := false, true
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "perf_event_attr:":
			inDump = true
			cur = perfAttr{}
		case inDump && strings.HasPrefix(line, "----"):
			inDump = false
			if ended {
				attrs = append(attrs, cur)
				ended = false
			}
		case inDump:
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			key := strings.Join(f[:len(f)-1], " ")
			v, err := strconv.ParseUint(f[len(f)-1], 0, 64)
			if err != nil {
				continue // sample_type IDENTIFIER and other flag names
			}
			cur[key] = v
		case strings.HasPrefix(line, "sys_perf_event_open:") && strings.Contains(line, " = "):
			ended = true
		case strings.HasSuffix(line, "event is not supported by the kernel."):
			ended = true
		}
	}
	if len(attrs) != len(names) {
		t.Fatalf("perf printed %d perf_event_attr dumps for %d events (%s ...)\n%s", len(attrs), len(names), names[0], lastLines(out, 30))
	}
	return attrs
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// cacheSpellings returns every cache event spelling perf's tables allow that
// perfbench accepts: each cache name alone, with one operation or result
// word, and with an operation and a result in either order. The words are
// perf's (tools/perf/util/evsel.c), written out here rather than taken from
// the tables the test checks.
func cacheSpellings() []string {
	cacheTypes := [][]string{
		{"L1-dcache", "l1-d", "l1d", "L1-data"},
		{"L1-icache", "l1-i", "l1i", "L1-instruction"},
		{"LLC", "L2"},
		{"dTLB", "d-tlb", "Data-TLB"},
		{"iTLB", "i-tlb", "Instruction-TLB"},
		{"branch", "branches", "bpu", "btb", "bpc"},
		{"node"},
	}
	cacheOps := [][]string{
		{"load", "loads", "read"},
		{"store", "stores", "write"},
		{"prefetch", "prefetches", "speculative-read", "speculative-load"},
	}
	cacheResults := [][]string{
		{"refs", "Reference", "ops", "access"},
		{"misses", "miss"},
	}
	var out []string
	for _, types := range cacheTypes {
		for _, ty := range types {
			out = append(out, ty)
			var words []string
			for _, table := range [][][]string{cacheOps, cacheResults} {
				for _, ws := range table {
					words = append(words, ws...)
				}
			}
			for _, w := range words {
				out = append(out, ty+"-"+w)
			}
			for _, ops := range cacheOps {
				for _, op := range ops {
					for _, rs := range cacheResults {
						for _, r := range rs {
							out = append(out, ty+"-"+op+"-"+r, ty+"-"+r+"-"+op)
						}
					}
				}
			}
		}
	}
	var ok []string
	for _, n := range out {
		if _, err := Parse(n, nil); err == nil {
			ok = append(ok, n)
		}
	}
	return ok
}

// TestParityWithPerf checks that every generic, cache and software spelling
// gets the type and config perf stat uses on this machine.
func TestParityWithPerf(t *testing.T) {
	perf := perfBinary(t)
	sys, err := LoadSystem("/")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range catalog() {
		names = append(names, c.Name)
		names = append(names, c.Aliases...)
	}
	names = append(names, cacheSpellings()...)
	if len(names) < 2000 {
		t.Fatalf("only %d spellings to check", len(names))
	}
	checked := 0
	for start := 0; start < len(names); start += 1000 {
		batch := names[start:min(start+1000, len(names))]
		attrs := perfAttrs(t, perf, batch)
		for i, n := range batch {
			l, err := Parse(n, sys)
			if err != nil {
				t.Errorf("Parse(%q): %v", n, err)
				continue
			}
			e := l.Events[0]
			want := attrs[i]
			for _, enc := range e.Encodings {
				if uint64(enc.Type) != want["type"] || enc.Config != want["config"] {
					t.Errorf("%s: perfbench type %d config %#x, perf type %d config %#x", n, enc.Type, enc.Config, want["type"], want["config"])
				}
			}
			checked++
		}
	}
	t.Logf("%d spellings agree with perf", checked)
}

// TestParityPMUAndTracepoint checks msr/tsc/, raw events and tracepoints
// (their ids from tracefs) against perf.
func TestParityPMUAndTracepoint(t *testing.T) {
	perf := perfBinary(t)
	sys, err := LoadSystem("/")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"r1a2", "r0"}
	if sys.PMU("msr") != nil {
		names = append(names, "msr/tsc/", "msr/event=0x0/")
	}
	sameTypeAndConfig(t, perf, sys, names)
	t.Run("tracepoints", func(t *testing.T) {
		if sys.TraceFS == "" {
			testenv.Skip(t, "tracefs is not mounted: tracepoints cannot be compared", "mount -t tracefs nodev /sys/kernel/tracing")
		}
		sameTypeAndConfig(t, perf, sys, []string{"sched:sched_switch", "sched:sched_process_exit"})
	})
}

// sameTypeAndConfig checks that perfbench encodes each of names with the
// type and config perf gives it.
func sameTypeAndConfig(t *testing.T, perf string, sys *System, names []string) {
	t.Helper()
	attrs := perfAttrs(t, perf, names)
	for i, n := range names {
		e := one(t, n, sys)
		enc, want := e.Encodings[0], attrs[i]
		if uint64(enc.Type) != want["type"] || enc.Config != want["config"] {
			t.Errorf("%s: perfbench type %d config %#x, perf type %d config %#x", n, enc.Type, enc.Config, want["type"], want["config"])
		}
	}
}

// TestParityModifiers checks the exclude, pinned and exclusive bits of
// modifiers against perf. perf also sets exclude_guest on every event
// without G or H; perfbench does not (guest exclusion only matters for KVM
// guest code, and PMUs such as msr refuse it), so exclude_guest is compared
// only where G or H was given.
func TestParityModifiers(t *testing.T) {
	perf := perfBinary(t)
	sys, err := LoadSystem("/")
	if err != nil {
		t.Fatal(err)
	}
	mods := []string{"u", "k", "h", "uk", "ku", "kh", "ukh", "G", "H", "GH", "uG", "Gu", "kH", "I", "D", "e", "uI", "kDe", "ehkIu"}
	var names []string
	for _, m := range mods {
		names = append(names, "cycles:"+m, "context-switches:"+m, "L1-dcache-load-misses:"+m)
	}
	if sys.PMU("msr") != nil {
		names = append(names, "msr/tsc/u", "msr/tsc/kI")
	}
	attrs := perfAttrs(t, perf, names)
	bits := []struct {
		field string
		get   func(modifiers) bool
	}{
		{"exclude_user", func(m modifiers) bool { return m.ExcludeUser }},
		{"exclude_kernel", func(m modifiers) bool { return m.ExcludeKernel }},
		{"exclude_hv", func(m modifiers) bool { return m.ExcludeHV }},
		{"exclude_idle", func(m modifiers) bool { return m.ExcludeIdle }},
		{"exclude_host", func(m modifiers) bool { return m.ExcludeHost }},
		{"exclude_guest", func(m modifiers) bool { return m.ExcludeGuest }},
		{"pinned", func(m modifiers) bool { return m.Pinned }},
		{"exclusive", func(m modifiers) bool { return m.Exclusive }},
	}
	for i, n := range names {
		e := one(t, n, sys)
		gh := strings.ContainsAny(n[strings.LastIndexAny(n, ":/")+1:], "GH")
		for _, b := range bits {
			got := b.get(e.Modifiers)
			want := attrs[i][b.field] == 1
			if b.field == "exclude_guest" && !gh {
				if got {
					t.Errorf("%s: perfbench sets exclude_guest without G or H", n)
				}
				continue
			}
			if got != want {
				t.Errorf("%s: %s perfbench %v, perf %v", n, b.field, got, want)
			}
		}
		enc, want := e.Encodings[0], attrs[i]
		if uint64(enc.Type) != want["type"] || enc.Config != want["config"] {
			t.Errorf("%s: perfbench type %d config %#x, perf type %d config %#x", n, enc.Type, enc.Config, want["type"], want["config"])
		}
	}
}

// TestParityRejects checks that spellings perfbench refuses because perf's
// lexer cannot read them are refused by perf too.
func TestParityRejects(t *testing.T) {
	perf := perfBinary(t)
	for _, n := range []string{"Cycles", "dtlb-load-misses", "l1-icache-loads", "branches-loads", "branch-misses-loads", "bpu-ref", "rz", "iTLB-stores", "msr/tsc/:u", "cycles:uuk"} {
		if _, err := Parse(n, nil); err == nil {
			t.Errorf("perfbench accepts %q", n)
		}
		out, err := exec.Command(perf, "stat", "-e", n, "--", "true").CombinedOutput()
		if err == nil {
			t.Errorf("perf accepts %q, perfbench does not:\n%s", n, out)
		}
	}
}
