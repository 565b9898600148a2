package calibrate

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/host/hostinfo"
	"github.com/perfbench/perfbench/perfevent"
)

// fakeMachine is a calibration thread whose counters and /proc are
// computed from a truth: the loop's cost per iteration, the clock, and
// what a faulty PMU or kernel makes of them.
type fakeMachine struct {
	cpu int
	// Truth: the core runs at coreGHz, the TSC at tscGHz; an iteration
	// retires instr user-space instructions in cycles cycles.
	instr, cycles    float64
	coreGHz, tscGHz  float64
	readInstr        float64 // user-space instructions of one read of the counters
	readNs           float64 // CPU time of one read
	noPMU            bool    // hardware events do not open
	instrScale       float64 // what the PMU makes of instructions (1: right)
	cyclesScale      float64 // and of cycles
	procSkew         float64 // /proc's CPU time is the truth × (1+procSkew)
	statSkew         float64 // stat's utime+stime is /proc's CPU time × (1+statSkew)
	procSwitches     uint64  // /proc counts each switch this many times (1: right)
	bigGroupFraction float64 // a group of more than 2 core PMU events runs this fraction of the time (1: no multiplexing)

	iters    uint64
	ns       float64
	switches uint64 // one per 2^24 iterations: the thread is preempted
}

// goodMachine is a bare-metal core at its nominal 3 GHz running amd64's
// loop as its PMU should count it.
func goodMachine() *fakeMachine {
	return &fakeMachine{cpu: 5, instr: 11, cycles: 8, coreGHz: 3, tscGHz: 3, readInstr: 2000, readNs: 3000,
		instrScale: 1, cyclesScale: 1, procSwitches: 1, bigGroupFraction: 1}
}

func (m *fakeMachine) where() (int, int) { return 4242, m.cpu }

func (m *fakeMachine) spin(n uint64) {
	m.iters += n
	m.ns += float64(n) * m.cycles / m.coreGHz
	m.switches = m.iters >> 24
}

func (m *fakeMachine) threadTime() (cpuTime, error) {
	ns := m.ns * (1 + m.procSkew)
	return cpuTime{sched: uint64(ns), hasSched: true, ticks: uint64(ns * (1 + m.statSkew) / 1e7), tickNs: 1e7,
		switches: m.switches * m.procSwitches, hasSwitches: true}, nil
}

func (m *fakeMachine) cpuFreq() (float64, bool) { return m.coreGHz * 1e6, true }

func (m *fakeMachine) probe(e perfevent.Event) error {
	if m.noPMU && e.Kind.String() != "software" {
		return errors.New("open " + e.Name + " on this process: not supported: this machine has no hardware PMU (ENOENT)")
	}
	return nil
}

func (m *fakeMachine) count(l perfevent.List) (meter, error) {
	return &fakeMeter{m: m, l: l, iters0: m.iters, ns0: m.ns, switches0: m.switches}, nil
}

type fakeMeter struct {
	m         *fakeMachine
	l         perfevent.List
	iters0    uint64
	ns0       float64
	switches0 uint64
	reads     float64
}

func (fm *fakeMeter) read() ([]perfevent.Count, error) {
	m := fm.m
	m.ns += m.readNs
	fm.reads++
	iters, ns := float64(m.iters-fm.iters0), m.ns-fm.ns0
	core := 0 // events on the core PMU's counters
	for _, e := range fm.l.Events {
		switch e.Name {
		case "cycles", "instructions", "instructions:u", "branches":
			core++
		}
	}
	out := make([]perfevent.Count, len(fm.l.Events))
	for i, e := range fm.l.Events {
		var v float64
		switch e.Name {
		case "cycles":
			v = ns * m.coreGHz * m.cyclesScale
		case "instructions", "instructions:u":
			v = (iters*m.instr + fm.reads*m.readInstr) * m.instrScale
		case "branches":
			v = iters
		case "task-clock":
			v = ns
		case "context-switches":
			v = float64(m.switches - fm.switches0)
		case "msr/tsc/", "msr/mperf/":
			v = ns * m.tscGHz
		case "msr/aperf/":
			v = ns * m.coreGHz
		default:
			panic("fake machine: no count for " + e.Name)
		}
		frac := 1.0
		if core > 2 && e.Kind.String() != "software" {
			frac = m.bigGroupFraction
		}
		out[i] = perfevent.Count{Raw: uint64(v * frac), Enabled: uint64(ns), Running: uint64(ns * frac)}
	}
	return out, nil
}

func (fm *fakeMeter) unsupported() map[string]string {
	bad := map[string]string{}
	for _, e := range fm.l.Events {
		if fm.m.noPMU && e.Kind.String() != "software" {
			bad[e.Name] = "not supported"
		}
	}
	return bad
}

func (fm *fakeMeter) close() error { return nil }

// readHost reads a fixture machine of another package's testdata.
func readHost(t *testing.T, dir string) *hostinfo.Host {
	t.Helper()
	h, err := hostinfo.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if h.System == nil {
		t.Fatalf("%s: no perf events: %v", dir, h.SystemErr)
	}
	return h
}

const (
	bareMetal = "../../perfevent/testdata/amd-zen"  // 6 general-purpose counters, msr aperf/mperf/tsc
	kvmAMD    = "../host/hostinfo/testdata/kvm-amd" // the same PMU in a KVM guest, NMI watchdog on
	vmNoPMU   = "../host/hostinfo/testdata/vm"      // no core PMU, msr/tsc/ only
)

func calibrateFake(t *testing.T, dir string, m *fakeMachine) (hostinfo.Report, map[string]hostinfo.Check) {
	t.Helper()
	rep, err := calibrate(context.Background(), m, readHost(t, dir), workload{supported: true, instructions: 11, cycles: 8,
		branches: 1, adds: 8, text: "test loop"})
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]hostinfo.Check{}
	var text strings.Builder
	for _, c := range rep.Checks {
		if _, dup := checks[c.Name]; dup {
			t.Errorf("two %q checks", c.Name)
		}
		checks[c.Name] = c
		text.WriteString(string(c.Verdict) + "  " + c.Name + "  " + c.Detail + "\n")
	}
	t.Logf("\n%s%s", text.String(), rep.Conclusion)
	return rep, checks
}

func verdicts(checks map[string]hostinfo.Check) map[string]hostinfo.Verdict {
	out := map[string]hostinfo.Verdict{}
	for n, c := range checks {
		out[n] = c.Verdict
	}
	return out
}

func sameVerdicts(t *testing.T, got map[string]hostinfo.Check, want map[string]hostinfo.Verdict) {
	t.Helper()
	g := verdicts(got)
	if len(g) != len(want) {
		t.Errorf("checks %v, want %v", g, want)
		return
	}
	for n, v := range want {
		if g[n] != v {
			t.Errorf("checks %v, want %v", g, want)
			return
		}
	}
}

// TestTrusted: a PMU that counts the loop right, on bare metal at the
// nominal clock, with counters to spare: every check passes and counts can
// be trusted.
func TestTrusted(t *testing.T) {
	rep, checks := calibrateFake(t, bareMetal, goodMachine())
	sameVerdicts(t, checks, map[string]hostinfo.Verdict{"workload": hostinfo.OK, "hardware PMU": hostinfo.OK, "instructions": hostinfo.OK,
		"cycles": hostinfo.OK, "frequency": hostinfo.OK, "task-clock": hostinfo.OK, "context-switches": hostinfo.OK, "counter " +
			"group": hostinfo.OK, "default events": hostinfo.OK})
	if d := checks["context-switches"].Detail; !strings.HasPrefix(d, "28 on the calibration thread; "+
		"/proc/self/task/4242/status voluntary+nonvoluntary 28: within 2") {
		t.Errorf("context-switches: %s", d)
	}
	if !rep.Usable || rep.Conclusion != "counts here can be trusted" {
		t.Errorf("usable %v, conclusion %q", rep.Usable, rep.Conclusion)
	}
	// The slope takes away the fixed cost of the reads: exactly 11, and
	// the 2000 instructions of a read show as the fixed part.
	if d := checks["instructions"].Detail; !strings.HasPrefix(d, "11.0000 per iteration in user space (instructions:u), "+
		"expected 11 (+0.00%)") || !strings.Contains(d, "less a fixed 2000 of reading") {
		t.Errorf("instructions: %s", d)
	}
	if d := checks["cycles"].Detail; !strings.HasPrefix(d, "8.000 per iteration, expected 8 (+0.00%)") {
		t.Errorf("cycles: %s", d)
	}
	// 6 general-purpose counters, no fixed ones: cycles, instructions and
	// 4 × branches, all counting.
	if d := checks["counter group"].Detail; !strings.HasPrefix(d, "6 events at once (cycles, instructions and 4 × "+
		"branches") || !strings.Contains(d, "counted all the time") || !strings.Contains(d, "branches per iteration 1.000, 1.000, 1.000, 1.000") {
		t.Errorf("counter group: %s", d)
	}
	if d := checks["frequency"].Detail; !strings.Contains(d, "(1.0000 × 3.000 GHz), was 3.000 GHz (+0.00%)") {
		t.Errorf("frequency: %s", d)
	}
}

// TestNotTrusted: each fault of the PMU or the kernel fails its check, and
// the conclusion says counts cannot be trusted and why.
func TestNotTrusted(t *testing.T) {
	cases := []struct {
		name  string
		dir   string
		fault func(*fakeMachine)
		fail  []string // the checks that fail
		why   string
	}{
		{"instructions 1.5% high", bareMetal, func(m *fakeMachine) { m.instrScale = 1.015 }, []string{"instructions"},
			"instructions per iteration 11.165 where the loop retires 11"},
		// Cycles 10% short are short of the ADD chain and of the clock.
		{"cycles lost", bareMetal, func(m *fakeMachine) { m.cyclesScale = 0.9 }, []string{"cycles", "frequency"},
			"cycles per iteration 7.20, below the 8 the ADD chain needs; cycles are -10.0% off the core's clock (APERF)"},
		{"full group multiplexed", kvmAMD, func(m *fakeMachine) { m.bigGroupFraction = 0.8 }, []string{"counter group"},
			"a group of the PMU's full budget was multiplexed (the NMI watchdog holds a hardware counter (kernel.nmi_watchdog = 1))"},
		{"task-clock 3% off /proc", bareMetal, func(m *fakeMachine) { m.procSkew = 0.03 }, []string{"task-clock"},
			"task-clock and the thread's CPU time in /proc (schedstat) are 3.0% apart"},
		{"stat 4% off: more than 2% and 2 ticks", bareMetal, func(m *fakeMachine) { m.statSkew = 0.04 }, []string{"task-clock"},
			"task-clock and the thread's CPU time in /proc (stat) are 4.0% apart"},
		{"context-switches half of /proc's", bareMetal, func(m *fakeMachine) { m.procSwitches = 2 }, []string{"context-switches"},
			"context-switches 28 where /proc counts 56"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := goodMachine()
			tc.fault(m)
			rep, checks := calibrateFake(t, tc.dir, m)
			for n, c := range checks {
				if want := slices.Contains(tc.fail, n); want != (c.Verdict == hostinfo.Fail) {
					t.Errorf("%s: %s, want fail %v", n, c.Verdict, want)
				}
			}
			for _, n := range tc.fail {
				if _, ok := checks[n]; !ok {
					t.Errorf("no %s check", n)
				}
			}
			if want := "counts here cannot be trusted: " + tc.why; rep.Usable || rep.Conclusion != want {
				t.Errorf("usable %v, conclusion\n%q, want\n%q", rep.Usable, rep.Conclusion, want)
			}
		})
	}
}

// TestNoPMUFake: without a PMU only task-clock is checked, and the report
// says there is no PMU; task-clock within 2% of /proc passes, 3% fails.
func TestNoPMUFake(t *testing.T) {
	for _, skew := range []float64{0.015, -0.015, 0.03, -0.03} {
		m := goodMachine()
		m.noPMU, m.procSkew = true, skew
		rep, checks := calibrateFake(t, vmNoPMU, m)
		want := hostinfo.OK
		if math.Abs(skew) > cpuTimeTolerance {
			want = hostinfo.Fail
		}
		sameVerdicts(t, checks, map[string]hostinfo.Verdict{"workload": hostinfo.OK, "hardware PMU": hostinfo.Warn,
			"task-clock": want, "context-switches": hostinfo.OK})
		if d := checks["hardware PMU"].Detail; !strings.HasPrefix(d, "none: cycles and instructions cannot be opened") {
			t.Errorf("hardware PMU: %s", d)
		}
		if rep.Usable != (want == hostinfo.OK) {
			t.Errorf("skew %+.3f: usable %v", skew, rep.Usable)
		}
		if want == hostinfo.OK && !strings.Contains(rep.Conclusion, "there is no hardware PMU") {
			t.Errorf("skew %+.3f: conclusion %q", skew, rep.Conclusion)
		}
	}
}

// TestGroupList: the full group fills the general-purpose counters, and
// two fixed counters take cycles and instructions off them.
func TestGroupList(t *testing.T) {
	sys := readHost(t, bareMetal).System
	for _, tc := range []struct {
		ct   perfevent.Counters
		want string
	}{
		{perfevent.Counters{Known: true, Generic: 6}, "cycles instructions branches branches branches branches"},
		{perfevent.Counters{Known: true, Generic: 8, Fixed: 3}, "cycles instructions" + strings.Repeat(" branches", 8)},
		{perfevent.Counters{}, "cycles instructions branches branches"},
	} {
		l, _, err := groupList(&perfevent.PMU{Name: "cpu", Counters: tc.ct}, sys)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range l.Events {
			names = append(names, e.Name)
		}
		if got := strings.Join(names, " "); got != tc.want || len(l.Groups) != 1 || len(l.Groups[0]) != len(l.Events) {
			t.Errorf("%+v: %s in groups %v, want %s in one group", tc.ct, got, l.Groups, tc.want)
		}
	}
}

// TestLoopByConstruction assembles the loop of each architecture, whatever
// the machine, disassembles it and counts what one iteration executes: the
// instructions from the back branch's target to the back branch, the
// branches among them, and the ADDs of the dependency chain. These are the
// counts the checks expect, so they are facts of the code, not
// measurements.
func TestLoopByConstruction(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	for _, arch := range []string{"amd64", "arm64"} {
		obj := filepath.Join(t.TempDir(), arch+".o")
		asm := exec.Command(goTool, "tool", "asm", "-I", filepath.Join(runtime.GOROOT(), "pkg", "include"), "-p", "calibrate", "-o", obj, "workload_"+arch+".s")
		asm.Env = append(os.Environ(), "GOARCH="+arch)
		if out, err := asm.CombinedOutput(); err != nil {
			t.Fatalf("go tool asm (%s): %v\n%s", arch, err, out)
		}
		out, err := exec.Command(goTool, "tool", "objdump", "-s", `^calibrate\.spin$`, obj).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool objdump: %v\n%s", err, out)
		}
		body := loopBody(t, string(out))
		var branches, adds int
		for _, op := range body {
			switch {
			case isBranch(op):
				branches++
			case op == "ADDQ $0x1, AX" || op == "ADD $1, R0, R0":
				adds++
			}
		}
		w := loops[arch]
		t.Logf("%s: %d instructions per iteration: %s", arch, len(body), strings.Join(body, "; "))
		if float64(len(body)) != w.instructions || float64(branches) != w.branches || uint64(adds) != w.adds || float64(adds) != w.cycles {
			t.Errorf("%s: the loop executes %d instructions, %d branches, %d chained ADDs per iteration; the checks expect %v "+
				"instructions, %v branches, %d ADDs, %v cycles",
				arch, len(body), branches, adds, w.instructions, w.branches, w.adds, w.cycles)
		}
	}
	if !loop.supported {
		return
	}
	// The chain's sum says the loop ran n times, across chunks.
	if got := spinChunks(3*chunk + 5); got != 8*(3*chunk+5) {
		t.Errorf("spinChunks(3×chunk+5) = %d, want %d", got, 8*(3*chunk+5))
	}
}

func isBranch(op string) bool {
	m := strings.Fields(op)[0]
	return strings.HasPrefix(m, "J") || strings.HasPrefix(m, "CB") || strings.HasPrefix(m, "B")
}

// loopBody is the instructions of the one backward branch's loop in a go
// tool objdump listing: amd64's branches give the target's address
// ("JNE 0x415"), arm64's an offset in instructions ("CBNZ R1, -9(PC)").
func loopBody(t *testing.T, listing string) []string {
	t.Helper()
	type insn struct {
		addr int64
		op   string
	}
	var code []insn
	for _, l := range strings.Split(listing, "\n") {
		f := strings.Split(strings.TrimSpace(l), "\t")
		// workload_amd64.s:22, 0x415, "", "", 4883c001, "", ADDQ $0x1, AX
		if len(f) < 3 || !strings.Contains(f[0], ".s:") {
			continue
		}
		var rest []string
		for _, x := range f[1:] {
			if x = strings.TrimSpace(x); x != "" {
				rest = append(rest, x)
			}
		}
		a, err := strconv.ParseInt(rest[0], 0, 64)
		if err != nil || len(rest) < 3 {
			t.Fatalf("cannot read %q", l)
		}
		code = append(code, insn{a, rest[2]})
	}
	var body []string
	for i, in := range code {
		if !isBranch(in.op) {
			continue
		}
		f := strings.Fields(in.op)
		last := f[len(f)-1]
		target, err := strconv.ParseInt(last, 0, 64)
		if n, ok := strings.CutSuffix(last, "(PC)"); ok {
			var k int64
			k, err = strconv.ParseInt(n, 10, 64)
			target = in.addr + 4*k
		}
		if err != nil || target >= in.addr {
			continue
		}
		if body != nil {
			t.Fatalf("two backward branches in:\n%s", listing)
		}
		for _, b := range code[:i+1] {
			if b.addr >= target {
				body = append(body, b.op)
			}
		}
	}
	if body == nil {
		t.Fatalf("no loop in:\n%s", listing)
	}
	return body
}

// TestPickCPU: the last allowed CPU, a performance core on a hybrid CPU.
func TestPickCPU(t *testing.T) {
	hybrid := readHost(t, "../host/hostinfo/testdata/metal-hybrid").System // cpu_core 0-15, cpu_atom 16-23
	amd := readHost(t, bareMetal).System
	for _, tc := range []struct {
		sys     *perfevent.System
		allowed string
		want    int
	}{
		{hybrid, "0-23", 15},
		{hybrid, "2,3,17-20", 3},
		{hybrid, "16-23", 23}, // no performance core allowed
		{amd, "0-7", 7},
		{amd, "0", 0},
	} {
		if got := pickCPU(cpuList(tc.allowed), tc.sys); got != tc.want {
			t.Errorf("allowed %s: CPU %d, want %d", tc.allowed, got, tc.want)
		}
	}
	for _, bad := range []string{"3-1", "a", "1,", ""} {
		if got := cpuList(bad); got != nil {
			t.Errorf("%q: %v, want nil", bad, got)
		}
	}
}

// TestBusyCPU: a thread switched out a few times per second of its CPU time
// ran alone; thousands of times, it shared its CPU (then the task-clock
// check's failure says so), and without /proc's switch counts nothing is
// said.
func TestBusyCPU(t *testing.T) {
	at := func(ticks, switches uint64) cpuTime {
		return cpuTime{ticks: ticks, tickNs: 1e7, switches: switches, hasSwitches: true}
	}
	for _, tc := range []struct {
		name       string
		start, end cpuTime
		want       int64
		busy       bool
	}{
		{"alone: 9 switches in 1.25 s", at(100, 10), at(225, 19), 9, false},
		{"shared: 6229 switches in 1.2 s", at(100, 10), at(220, 6239), 6229, true},
		{"just under 100 per second", at(0, 0), at(200, 199), 199, false},
		{"just over 100 per second", at(0, 0), at(200, 201), 201, true},
		{"no switch counts", cpuTime{ticks: 0, tickNs: 1e7}, cpuTime{ticks: 120, tickNs: 1e7, switches: 6000}, 0, false},
	} {
		short := run{cpu: [2]cpuTime{tc.start, tc.start}}
		long := run{cpu: [2]cpuTime{tc.start, tc.end}}
		if n, busy := busyCPU(short, long); n != tc.want || busy != tc.busy {
			t.Errorf("%s: busyCPU = %d, %v; want %d, %v", tc.name, n, busy, tc.want, tc.busy)
		}
	}
}

// TestSwitchesBusy: context-switches a few apart from /proc's count fail
// the check; when the calibration thread was switched out more than
// busySwitches times a second, the failure says the CPU was busy and to
// calibrate again, as task-clock's does.
func TestSwitchesBusy(t *testing.T) {
	at := func(ticks, switches uint64) cpuTime {
		return cpuTime{ticks: ticks, tickNs: 1e7, switches: switches, hasSwitches: true}
	}
	for _, tc := range []struct {
		name     string
		counted  uint64
		end      cpuTime
		verdict  hostinfo.Verdict
		busyNote bool
	}{
		{"quiet, equal", 9, at(225, 19), hostinfo.OK, false},
		{"quiet, 5 apart", 4, at(225, 19), hostinfo.Fail, false},
		{"busy, within the slack", 1026, at(230, 1039), hostinfo.OK, false},
		{"busy, 4 apart beyond a slack of 3", 1025, at(230, 1039), hostinfo.Fail, true},
	} {
		c := &calibration{m: goodMachine()}
		short := run{counts: []perfevent.Count{{}}, cpu: [2]cpuTime{at(100, 10), at(100, 10)}}
		long := run{counts: []perfevent.Count{{Raw: tc.counted}}, cpu: [2]cpuTime{at(100, 10), tc.end}}
		c.switches(short, long, 0)
		if len(c.checks) != 1 {
			t.Fatalf("%s: checks %+v", tc.name, c.checks)
		}
		got := c.checks[0]
		if got.Verdict != tc.verdict || strings.Contains(got.Detail, "(the CPU was busy)") != tc.busyNote ||
			tc.busyNote != strings.HasPrefix(got.Fix, "calibrate again with nothing else running") {
			t.Errorf("%s: %s %q fix %q", tc.name, got.Verdict, got.Detail, got.Fix)
		}
	}
}
