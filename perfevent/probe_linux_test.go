package perfevent

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/testenv"
	"golang.org/x/sys/unix"
)

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestEventsProbeHere probes events on this machine for real. Software events
// open everywhere perf events exist; hardware events open only with a
// PMU, and the probe must say so when there is none.
func TestEventsProbeHere(t *testing.T) {
	sys, err := LoadSystem("/")
	if err != nil {
		t.Fatal(err)
	}
	before := openFDs(t)
	for _, n := range []string{"task-clock", "cpu-clock", "context-switches", "page-faults", "cpu-migrations", "task-clock:u", "{cs,faults}"} {
		for _, e := range mustParse(t, n, sys).Events {
			if err := sys.Probe(e); err != nil {
				t.Errorf("probe %s: %v", e.Name, err)
			}
		}
	}
	if sys.PMU("msr") != nil {
		if err := sys.Probe(one(t, "msr/tsc/", sys)); err != nil {
			t.Errorf("probe msr/tsc/: %v", err)
		}
	}
	hw := testenv.HW(t, sys.HasHardwarePMU())
	for _, n := range []string{"cycles", "instructions", "L1-dcache-load-misses", "r1a2"} {
		err := sys.Probe(one(t, n, sys))
		switch {
		case !hw:
			if !errors.Is(err, ErrNotSupported) || !errors.Is(err, unix.ENOENT) || !strings.Contains(err.Error(), "no hardware PMU") {
				t.Errorf("probe %s without a PMU: %v", n, err)
			}
		case n == "cycles" || n == "instructions":
			if err != nil {
				t.Errorf("probe %s on a machine with a PMU: %v", n, err)
			}
		default: // a CPU may lack the cache event or refuse the raw one
			if err != nil && !errors.Is(err, ErrNotSupported) {
				t.Errorf("probe %s on a machine with a PMU: %v, want success or ErrNotSupported", n, err)
			}
		}
	}
	if after := openFDs(t); after != before {
		t.Errorf("probing leaked descriptors: %d open before, %d after", before, after)
	}
}

func TestEventsProbePidGone(t *testing.T) {
	sys, err := LoadSystem("/")
	if err != nil {
		t.Fatal(err)
	}
	// Find a pid that does not exist.
	pid := 4_000_000
	for ; pid > 100; pid-- {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
			break
		}
	}
	err = sys.ProbePid(one(t, "task-clock", sys), pid)
	if !errors.Is(err, unix.ESRCH) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(pid)) || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("probe on missing pid %d: %v", pid, err)
	}
}

// TestEventsOpenError checks the explanation of each errno, with the failing
// syscall faked.
func TestEventsOpenError(t *testing.T) {
	vm, amd := fixture(t, "vm"), fixture(t, "amd-zen")
	defer func(f func() int) { euid = f }(euid)
	euid = func() int { return 1000 }
	ev := func(s *System, spec string) (Event, Encoding) {
		e := one(t, spec, s)
		return e, e.Encodings[0]
	}
	for _, tc := range []struct {
		sys      *System
		spec     string
		errno    unix.Errno
		sentinel error
		says     []string
	}{
		{vm, "instructions", unix.EACCES, ErrPermission, []string{"open instructions on tid 4187 of pid 4121: permission denied", "perf_event_paranoid=2", "root or grant CAP_PERFMON", ":u"}},
		{vm, "instructions:u", unix.EPERM, ErrPermission, []string{"perf_event_paranoid=2"}},
		{vm, "cycles", unix.ENOENT, ErrNotSupported, []string{"no hardware PMU", "ENOENT"}},
		{amd, "L1-icache-loads", unix.ENOENT, ErrNotSupported, []string{"PMU (cpu) has no such event", "ENOENT"}},
		{vm, "msr/tsc/u", unix.EINVAL, ErrNotSupported, []string{"PMU msr rejects", "EINVAL", "without the modifiers"}},
		{vm, "sched:sched_switch", unix.ENOENT, ErrNotSupported, []string{"no such tracepoint"}},
		{amd, "amd_l3/event=1/", unix.EOPNOTSUPP, ErrNotSupported, []string{"EOPNOTSUPP"}},
		{vm, "task-clock", unix.EMFILE, nil, []string{"too many open files", "ulimit -n"}},
		{vm, "task-clock", unix.ESRCH, nil, []string{"no such process"}},
	} {
		e, enc := ev(tc.sys, tc.spec)
		err := tc.sys.OpenError(e, enc, "tid 4187 of pid 4121", tc.errno)
		if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
			t.Errorf("%s %v: %v does not wrap %v", tc.spec, tc.errno, err, tc.sentinel)
		}
		if tc.sentinel == nil && (errors.Is(err, ErrPermission) || errors.Is(err, ErrNotSupported)) {
			t.Errorf("%s %v: %v wraps a sentinel", tc.spec, tc.errno, err)
		}
		if !errors.Is(err, tc.errno) {
			t.Errorf("%s: %v does not wrap the errno", tc.spec, err)
		}
		for _, s := range tc.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s %v: %q does not say %q", tc.spec, tc.errno, err, s)
			}
		}
	}
	euid = func() int { return 0 }
	e0, enc0 := ev(vm, "cycles")
	if err := vm.OpenError(e0, enc0, "pid 1", unix.EACCES); !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "even to root") {
		t.Errorf("EACCES as root: %v", err)
	}
	euid = func() int { return 1000 }
	p3 := 3
	s := &System{Paranoid: &p3}
	e, enc := ev(vm, "task-clock")
	if err := s.OpenError(e, enc, "pid 1", unix.EACCES); !strings.Contains(err.Error(), "perf_event_paranoid=3") || !strings.Contains(err.Error(), "sysctl kernel.perf_event_paranoid=2") {
		t.Errorf("paranoid 3: %v", err)
	}
}
