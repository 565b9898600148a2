package hostinfo

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

func read(t *testing.T, name string) *Host {
	t.Helper()
	h, err := Read("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Warnings) > 0 {
		t.Fatalf("%s: warnings %q", name, h.Warnings)
	}
	return h
}

func TestHostRead(t *testing.T) {
	vm := read(t, "vm")
	if vm.Hostname != "vm" || vm.Kernel != "6.18.44-fc-v657" || vm.CPUModel != "AMD EPYC" || vm.CPUs != 2 || vm.Vendor != "AuthenticAMD" {
		t.Errorf("vm identity: %+v", vm)
	}
	if vm.Paranoid == nil || *vm.Paranoid != 2 || vm.NMIWatchdog == nil || *vm.NMIWatchdog != 0 {
		t.Errorf("vm sysctls: paranoid %v watchdog %v", vm.Paranoid, vm.NMIWatchdog)
	}
	if vm.Virtualization != "vm" || !strings.Contains(vm.VirtualizationDetail, "hypervisor flag") {
		t.Errorf("vm virtualization %q (%s)", vm.Virtualization, vm.VirtualizationDetail)
	}
	if p := vm.Privileges; p.EUID != 0 || !p.Has(capPerfmon) || !p.Has(capSysAdmin) || !p.Has(capSysPtrace) || p.Has(24) {
		t.Errorf("vm privileges %+v (CapEff 1fffeffffff lacks only bit 24 below 41)", p)
	}
	if vm.NoFile != (limit{Soft: 20000, Hard: 20000, Known: true}) || vm.TraceFS != "/sys/kernel/tracing" {
		t.Errorf("vm nofile %+v tracefs %q", vm.NoFile, vm.TraceFS)
	}
	if vm.System == nil || vm.System.HasHardwarePMU() {
		t.Errorf("vm PMUs: %v", vm.System)
	}

	hy := read(t, "metal-hybrid")
	if hy.CPUs != 24 || hy.Virtualization != "none" || hy.Privileges.EUID != 1000 || hy.Privileges.CanPerfmon() || hy.TraceFS != "" {
		t.Errorf("metal-hybrid: %+v", hy)
	}
	if hy.NoFile != (limit{Soft: 1024, Hard: 524288, Known: true}) {
		t.Errorf("metal-hybrid nofile %+v", hy.NoFile)
	}
	kvm := read(t, "kvm-amd")
	if kvm.Virtualization != "kvm" || !strings.Contains(kvm.VirtualizationDetail, "QEMU") {
		t.Errorf("kvm-amd virtualization %q (%s)", kvm.Virtualization, kvm.VirtualizationDetail)
	}
	if kvm.NoFile.Hard != unlimited || kvm.TraceFS != "/sys/kernel/debug/tracing" || kvm.CPUs != 4 {
		t.Errorf("kvm-amd nofile %+v tracefs %q cpus %d", kvm.NoFile, kvm.TraceFS, kvm.CPUs)
	}
	if p := kvm.Privileges; p.Has(capPerfmon) || !p.CanPerfmon() {
		t.Errorf("kvm-amd: 5.4 kernel: CAP_SYS_ADMIN without CAP_PERFMON, got %+v", p)
	}
}

func TestHostFillProvenance(t *testing.T) {
	p := record.Provenance{Perfbench: "v1", Command: []string{"perfbench", "stat"}}
	read(t, "metal-hybrid").Fill(&p)
	if p.Hostname != "bench1" || p.CPUModel != "12th Gen Intel(R) Core(TM) i9-12900K" || p.CPUs != 24 || p.Kernel != "6.1.0-18-amd64" {
		t.Errorf("provenance identity %+v", p)
	}
	if p.PerfEventParanoid == nil || *p.PerfEventParanoid != 2 || p.NMIWatchdog == nil || *p.NMIWatchdog != 1 || p.Virtualization != "none" {
		t.Errorf("provenance sysctls %+v", p)
	}
	if strings.Join(p.PMUs, " ") != "breakpoint cpu_atom cpu_core msr power software tracepoint" {
		t.Errorf("provenance PMUs %q", p.PMUs)
	}
	if p.Perfbench != "v1" || len(p.Command) != 2 {
		t.Errorf("Fill overwrote the caller's fields: %+v", p)
	}
	q, err := Provenance("testdata/vm")
	if err != nil || q.Virtualization != "vm" || q.CPUs != 2 {
		t.Errorf("Provenance: %+v %v", q, err)
	}
}

func TestHostCPUList(t *testing.T) {
	for s, want := range map[string]int{"0": 1, "0-1": 2, "0-7,16-23": 16, "0,2,4": 3} {
		if n, err := countCPUList(s); err != nil || n != want {
			t.Errorf("countCPUList(%q) = %d, %v; want %d", s, n, err, want)
		}
	}
	if _, err := countCPUList("3-1"); err == nil {
		t.Error("countCPUList(3-1) accepted")
	}
}

// probeNoPMU opens software, msr and tracepoint events and refuses hardware
// events as a machine without a PMU does.
func probeNoPMU(sys *perfevent.System, e perfevent.Event, pid int) error {
	switch e.Kind.String() {
	case "software", "tracepoint", "pmu":
		return nil
	}
	return &perfevent.OpenError{Event: e.Name, Target: "this process", Reason: "not supported: this machine has no " +
		"hardware PMU (ENOENT)", Err: errors.New("ENOENT"), Kind: perfevent.ErrNotSupported}
}

func probeAll(*perfevent.System, perfevent.Event, int) error { return nil }

func probeDenied(sys *perfevent.System, e perfevent.Event, pid int) error {
	return &perfevent.OpenError{Event: e.Name, Target: "pid", Reason: "permission denied (perf_event_paranoid=2; run as " +
		"root or grant CAP_PERFMON)", Err: errors.New("EACCES"), Kind: perfevent.ErrPermission}
}

func checkOf(t *testing.T, r Report, name string) Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %q check in %+v", name, r.Checks)
	return Check{}
}

func expect(t *testing.T, r Report, name string, v Verdict, says ...string) {
	t.Helper()
	c := checkOf(t, r, name)
	if c.Verdict != v {
		t.Errorf("%s: verdict %s, want %s (%s)", name, c.Verdict, v, c.Detail)
	}
	text := c.Detail + " / " + c.Fix
	for _, s := range says {
		if !strings.Contains(text, s) {
			t.Errorf("%s: %q does not say %q", name, text, s)
		}
	}
	if (v == Warn || v == Fail) && c.Fix == "" {
		t.Errorf("%s: %s without a fix", name, v)
	}
}

func TestDoctorVM(t *testing.T) {
	r := Doctor(read(t, "vm"), DoctorOptions{Probe: probeNoPMU})
	if !r.Usable {
		t.Errorf("the VM can count software events: %+v", r)
	}
	expect(t, r, "kernel", OK, "6.18.44-fc-v657")
	expect(t, r, "privileges", OK, "root", "CAP_PERFMON")
	expect(t, r, "perf_event_paranoid", OK, "does not apply")
	expect(t, r, "counting", OK)
	expect(t, r, "hardware PMU", Warn, "no hardware PMU", "Still works: software events", "msr/tsc/", "tracepoints", "uprobes", "loses IPC/CPI", "virtual PMU")
	expect(t, r, "nmi_watchdog", OK, "off")
	expect(t, r, "virtualization", Warn, "hypervisor flag", "return zeros")
	// (20000 - 64 spare) / 8 counters = 2492 threads.
	expect(t, r, "open files", OK, "room for 2492 threads at 8 counters")
	expect(t, r, "tracefs", OK, "/sys/kernel/tracing", "(6 tracepoints)")

	r = Doctor(read(t, "vm"), DoctorOptions{Probe: probeNoPMU, Pid: 4121, Events: "cycles,task-clock,msr/tsc/,cs"})
	expect(t, r, "target", OK, "pid 4121 (mariadbd), 40 threads")
	// 40 threads x 4 counters + 64 = 224.
	expect(t, r, "open files", OK, "40 threads × 4 counters for -e + 64 spare = 224 descriptors")
	expect(t, r, "events", Warn, "1 of 4 events will show n/a", "cycles: not supported")
	if !r.Usable {
		t.Error("unsupported events alone do not make perfbench unusable")
	}
}

func TestDoctorHybridUnprivileged(t *testing.T) {
	h := read(t, "metal-hybrid")
	r := Doctor(h, DoctorOptions{Probe: probeAll, Pid: 2001, Events: "cycles,instructions"})
	expect(t, r, "privileges", Warn, "uid 1000", "setcap cap_perfmon,cap_sys_ptrace")
	expect(t, r, "perf_event_paranoid", Warn, "user space only", "perf_event_paranoid=1")
	expect(t, r, "hardware PMU", OK, "cpu_atom (type 8, cpus 16-23): counter budget unknown", "cpu_core (type 4, cpus 0-15)", "summed")
	expect(t, r, "nmi_watchdog", Warn, "one hardware counter", "nmi_watchdog=0")
	expect(t, r, "virtualization", OK, "bare metal")
	expect(t, r, "tracefs", Warn, "not mounted", "mount -t tracefs")
	// Hybrid: cycles and instructions have two encodings each: 300 threads
	// x 4 + 64 = 1264, within the hard limit of 524288.
	expect(t, r, "open files", OK, "300 threads × 4 counters for -e + 64 spare = 1264 descriptors")
	if !r.Usable {
		t.Errorf("usable machine reported unusable: %+v", r.Checks)
	}

	h.NoFile.Hard = 1000
	r = Doctor(h, DoctorOptions{Probe: probeAll, Pid: 2001, Events: "cycles,instructions"})
	expect(t, r, "open files", Fail, "over the hard limit", "at least 1264", "cgroup mode")
	if r.Usable {
		t.Error("a target that needs more descriptors than the hard limit is not countable")
	}
	h.NoFile.Hard = 1500
	r = Doctor(h, DoctorOptions{Probe: probeAll, Pid: 2001, Events: "cycles,instructions"})
	expect(t, r, "open files", Warn, "within 20%")

	r = Doctor(read(t, "metal-hybrid"), DoctorOptions{Probe: probeDenied, Pid: 2001})
	expect(t, r, "counting", Fail, "permission denied")
	expect(t, r, "target", Fail, "pid 2001 (mysqld)", "CAP_PERFMON")
	if r.Usable {
		t.Error("nothing opens, yet usable")
	}
}

func TestDoctorKVM(t *testing.T) {
	r := Doctor(read(t, "kvm-amd"), DoctorOptions{Probe: probeAll})
	expect(t, r, "kernel", Warn, "5.4.0-150-generic", "CAP_PERFMON needs 5.8")
	expect(t, r, "privileges", OK, "root with CAP_SYS_ADMIN, CAP_SYS_PTRACE")
	expect(t, r, "hardware PMU", OK, "cpu (type 4): 6 generic + 0 fixed counters per CPU (cpuinfo flag perfctr_core)")
	expect(t, r, "virtualization", Warn, "kvm", "QEMU")
	expect(t, r, "open files", OK, "no limit")
	expect(t, r, "tracefs", OK, "/sys/kernel/debug/tracing")
	expect(t, r, "nmi_watchdog", Warn)

	// A partial vPMU: the core PMU is there but cycles does not open.
	r = Doctor(read(t, "kvm-amd"), DoctorOptions{Probe: probeNoPMU})
	expect(t, r, "hardware PMU", Warn, "but open cycles", "partial")
}

func TestDoctorErrors(t *testing.T) {
	r := Doctor(read(t, "vm"), DoctorOptions{Probe: probeNoPMU, Pid: 999999})
	expect(t, r, "target", Fail, "pid 999999")
	r = Doctor(read(t, "vm"), DoctorOptions{Probe: probeNoPMU, Events: "cylces"})
	expect(t, r, "events", Fail, `did you mean "cycles"?`)
	h, err := Read(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r = Doctor(h, DoctorOptions{Probe: probeAll})
	if r.Usable {
		t.Error("a root without perf events is usable")
	}
	expect(t, r, "kernel", Fail, "no perf events")
	expect(t, r, "perf_event_paranoid", Fail, "missing")
}

func TestDoctorText(t *testing.T) {
	r := Doctor(read(t, "vm"), DoctorOptions{Probe: probeNoPMU})
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != len(r.Checks)+1 {
		t.Fatalf("%d lines for %d checks:\n%s", len(lines), len(r.Checks), buf.String())
	}
	for i, c := range r.Checks {
		if !strings.HasPrefix(lines[i], string(c.Verdict)+" ") || !strings.Contains(lines[i], c.Name) {
			t.Errorf("line %d %q does not start with verdict %s and name %s", i, lines[i], c.Verdict, c.Name)
		}
		if c.Fix != "" && !strings.Contains(lines[i], "Fix: "+c.Fix) {
			t.Errorf("line %d lacks its fix", i)
		}
	}
	if lines[len(lines)-1] != "perfbench can count here" {
		t.Errorf("last line %q", lines[len(lines)-1])
	}
	b, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(b), `"usable":true`) || !strings.Contains(string(b), `"verdict":"warn"`) {
		t.Errorf("json %s %v", b, err)
	}
}

// TestDoctorZombie: a target that has exited (a zombie) is said to be one,
// with the parent that has not reaped it; the machine itself can count, and
// the conclusion says so instead of "perfbench cannot count here".
func TestDoctorZombie(t *testing.T) {
	r := Doctor(read(t, "vm"), DoctorOptions{Probe: probeNoPMU, Pid: 4300, Events: "task-clock"})
	expect(t, r, "target", Fail, "pid 4300 (sysbench) is a zombie: it has exited and its parent, pid 4121, has not reaped it", "a running process")
	expect(t, r, "events", OK, "all 1 events open")
	want := "perfbench can count here, but not pid 4300: pid 4300 (sysbench) is a zombie: it has exited and its parent, " +
		"pid 4121, has not reaped it: the process has exited"
	if r.Usable || r.Conclusion != want {
		t.Errorf("usable %v, conclusion %q; want %q", r.Usable, r.Conclusion, want)
	}
	r = Doctor(read(t, "vm"), DoctorOptions{Probe: probeNoPMU, Pid: 999999})
	expect(t, r, "target", Fail, "pid 999999: no such process")
	if r.Conclusion != "perfbench can count here, but not pid 999999: pid 999999: no such process" {
		t.Errorf("conclusion %q", r.Conclusion)
	}
	// A machine that cannot count at all says so, whatever the target.
	r = Doctor(read(t, "metal-hybrid"), DoctorOptions{Probe: probeDenied, Pid: 2001})
	if r.Conclusion != "perfbench cannot count here" {
		t.Errorf("conclusion %q", r.Conclusion)
	}
}

// TestDoctorRootNotToldRunAsRoot: a root perfbench without the capabilities
// (a container) is told how to grant them, never to run as root.
func TestDoctorRootNotToldRunAsRoot(t *testing.T) {
	h := read(t, "vm")
	h.Privileges = privileges{Known: true, EUID: 0}
	r := Doctor(h, DoctorOptions{Probe: probeDenied, Pid: 4121})
	for _, c := range r.Checks {
		if strings.Contains(c.Fix, "run as root") {
			t.Errorf("%s tells root to run as root: %q", c.Name, c.Fix)
		}
	}
	expect(t, r, "privileges", Warn, "root but without CAP_PERFMON", "--cap-add PERFMON")
	expect(t, r, "perf_event_paranoid", Warn, "perf_event_paranoid=1", "--cap-add PERFMON")
	expect(t, r, "target", Fail, "pid 4121", "--cap-add PERFMON")
	// Root with every capability, refused all the same: not a capability.
	h.Privileges = read(t, "vm").Privileges
	r = Doctor(h, DoctorOptions{Probe: probeDenied, Pid: 4121})
	expect(t, r, "target", Fail, "pid 4121", "security module")
	// Another user is told to run as root.
	r = Doctor(read(t, "metal-hybrid"), DoctorOptions{Probe: probeDenied, Pid: 2001})
	expect(t, r, "target", Fail, "run as root or grant CAP_PERFMON")
	// A kernel before 5.8 (no CAP_PERFMON): root is not told to run as root,
	// another user is.
	for _, euid := range []int{0, 1000} {
		h = read(t, "vm")
		h.Kernel = "5.4.0-150-generic"
		h.Privileges.EUID = euid
		r = Doctor(h, DoctorOptions{Probe: probeDenied})
		if c := checkOf(t, r, "kernel"); strings.Contains(c.Fix, "run as root") != (euid != 0) {
			t.Errorf("euid %d, kernel 5.4: fix %q", euid, c.Fix)
		}
		expect(t, r, "kernel", Warn, "CAP_PERFMON needs 5.8", "5.8+ kernel")
	}
}
