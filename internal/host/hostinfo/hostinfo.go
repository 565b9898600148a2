// Package hostinfo describes the machine perfbench measures on: kernel, CPU,
// perf_event_paranoid, NMI watchdog, virtualization, privileges, PMUs and
// their counter budgets, descriptor limits and tracefs. It fills a Record's
// provenance and answers perfbench doctor.
//
// Everything is read under a root directory ("/" for this machine), so tests
// point it at fixture trees.
package hostinfo

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/internal/host/procfs"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// Host is what perfbench knows of the machine.
type Host struct {
	// Root is the directory everything was read under.
	Root string

	Hostname string
	// Kernel is the kernel release (uname -r), KernelVersion its build
	// string (uname -v).
	Kernel        string
	KernelVersion string

	CPUModel string
	// CPUs is the number of online CPUs.
	CPUs   int
	Vendor string

	// Paranoid is /proc/sys/kernel/perf_event_paranoid; nil when absent
	// (a kernel without perf events).
	Paranoid *int
	// NMIWatchdog is /proc/sys/kernel/nmi_watchdog; nil when absent.
	NMIWatchdog *int

	// Virtualization is "none" on bare metal, else what was recognised:
	// "kvm", "vmware", "hyperv", "xen", "vm" (hypervisor unknown)...
	Virtualization string
	// VirtualizationDetail says how it was recognised.
	VirtualizationDetail string
	// Container is "docker", "podman" or empty.
	Container string

	// Privileges of this process.
	Privileges privileges

	// NoFile is this process's RLIMIT_NOFILE.
	NoFile limit

	// TraceFS is where tracefs is mounted, empty when it is not.
	TraceFS string

	// System is the PMUs and tracepoints perfevent sees; nil when the
	// kernel has no perf events (SystemErr says why).
	System    *perfevent.System
	SystemErr error

	// Warnings are problems met while reading that did not stop it.
	Warnings []string
}

// privileges are this process's user and the capabilities that matter to
// perf events.
type privileges struct {
	// EUID is the effective user id, -1 when unknown.
	EUID int
	// Effective is the CapEff mask from /proc/self/status.
	Effective uint64
	// Known is false when /proc/self/status could not be read.
	Known bool
}

// Capability numbers (linux/capability.h).
const (
	capSysPtrace = 19
	capSysAdmin  = 21
	capPerfmon   = 38
)

// Has reports whether capability c is effective.
func (p privileges) Has(c int) bool { return p.Known && p.Effective&(1<<c) != 0 }

// CanPerfmon reports whether perf_event_paranoid does not apply: root, or
// CAP_PERFMON, or CAP_SYS_ADMIN (kernels before 5.8).
func (p privileges) CanPerfmon() bool { return p.Has(capPerfmon) || p.Has(capSysAdmin) }

// limit is a soft and hard resource limit; Unlimited marks RLIM_INFINITY.
type limit struct {
	Soft, Hard uint64
	Known      bool
}

// unlimited is how an "unlimited" limit is stored.
const unlimited = ^uint64(0)

// Read describes the machine under root.
func Read(root string) (*Host, error) {
	h := &Host{Root: root, Privileges: privileges{EUID: -1}}
	read := func(rel string) (string, bool) {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return "", false
		}
		return strings.TrimSpace(string(b)), true
	}
	proc := procfs.New(root)
	sysctl := func(name string) string {
		v, _ := proc.Sysctl(name)
		return v
	}
	sysctlInt := func(name string) *int {
		s, err := proc.Sysctl(name)
		if err != nil {
			return nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			h.Warnings = append(h.Warnings, fmt.Sprintf("%s: %q is not a number", name, s))
			return nil
		}
		return &n
	}
	h.Hostname = sysctl("kernel.hostname")
	h.Kernel = sysctl("kernel.osrelease")
	h.KernelVersion = sysctl("kernel.version")
	h.Paranoid = sysctlInt("kernel.perf_event_paranoid")
	h.NMIWatchdog = sysctlInt("kernel.nmi_watchdog")

	cpuinfo, _ := proc.ReadFile("cpuinfo")
	ci := parseCPUInfo(cpuinfo)
	h.CPUModel, h.Vendor, h.CPUs = ci.model, ci.vendor, ci.processors
	if s, ok := read("sys/devices/system/cpu/online"); ok {
		if n, err := countCPUList(s); err == nil {
			h.CPUs = n
		}
	}
	h.Virtualization, h.VirtualizationDetail = detectVirt(ci.flags, read)
	switch {
	case exists(filepath.Join(root, ".dockerenv")):
		h.Container = "docker"
	case exists(filepath.Join(root, "run/.containerenv")):
		h.Container = "podman"
	}

	if b, err := proc.Self().ReadFile("status"); err == nil {
		h.Privileges = parseStatus(b)
	}
	if b, err := proc.Self().ReadFile("limits"); err == nil {
		h.NoFile = parseNoFile(b)
	}
	if b, err := proc.ReadFile("mounts"); err == nil {
		h.TraceFS = traceFSMount(b)
	}

	h.System, h.SystemErr = perfevent.LoadSystem(root)
	if h.System != nil {
		h.Warnings = append(h.Warnings, h.System.Warnings...)
		if h.TraceFS == "" && h.System.TraceFS != "" {
			h.TraceFS = filepath.Dir(h.System.TraceFS)
		}
	}
	return h, nil
}

// Fill sets the host fields of a Record's provenance. It leaves perfbench's
// version, command line, plan and time to the caller.
func (h *Host) Fill(p *record.Provenance) {
	p.Hostname = h.Hostname
	p.CPUModel = h.CPUModel
	p.CPUs = h.CPUs
	p.Kernel = h.Kernel
	p.PerfEventParanoid = h.Paranoid
	p.NMIWatchdog = h.NMIWatchdog
	p.Virtualization = h.Virtualization
	p.PMUs = nil
	if h.System != nil {
		p.PMUs = h.System.PMUNames()
	}
}

// Provenance reads the machine under root and returns a provenance with the
// host fields set.
func Provenance(root string) (record.Provenance, error) {
	var p record.Provenance
	h, err := Read(root)
	if err != nil {
		return p, err
	}
	h.Fill(&p)
	return p, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

type cpuInfo struct {
	model, vendor string
	processors    int
	flags         map[string]bool
}

// parseCPUInfo reads the model, vendor, flags (of the first CPU) and the
// number of processors from /proc/cpuinfo.
func parseCPUInfo(b []byte) cpuInfo {
	ci := cpuInfo{flags: map[string]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			ci.processors++
		case "model name", "Model", "cpu model":
			if ci.model == "" {
				ci.model = v
			}
		case "vendor_id":
			if ci.vendor == "" {
				ci.vendor = v
			}
		case "flags", "Features":
			if ci.processors <= 1 {
				for _, f := range strings.Fields(v) {
					ci.flags[f] = true
				}
			}
		}
	}
	return ci
}

// countCPUList counts the CPUs of a list such as "0-3,8-11".
func countCPUList(s string) (int, error) {
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		l, err := strconv.Atoi(lo)
		if err != nil {
			return 0, err
		}
		h := l
		if isRange {
			if h, err = strconv.Atoi(hi); err != nil {
				return 0, err
			}
		}
		if h < l {
			return 0, fmt.Errorf("bad cpu range %q", part)
		}
		n += h - l + 1
	}
	return n, nil
}

// detectVirt recognises a hypervisor from DMI, /sys/hypervisor and the
// cpuinfo hypervisor flag.
func detectVirt(flags map[string]bool, read func(string) (string, bool)) (string, string) {
	vendor, _ := read("sys/class/dmi/id/sys_vendor")
	product, _ := read("sys/class/dmi/id/product_name")
	dmi := strings.TrimSpace(vendor + " " + product)
	known := []struct{ match, name string }{
		{"QEMU", "kvm"},
		{"KVM", "kvm"},
		{"Amazon EC2", "kvm"},
		{"Google Compute Engine", "kvm"},
		{"VMware", "vmware"},
		{"Microsoft Corporation Virtual Machine", "hyperv"},
		{"Xen", "xen"},
		{"innotek GmbH", "virtualbox"},
		{"Parallels", "parallels"},
		{"OpenStack", "kvm"},
	}
	for _, k := range known {
		if strings.Contains(dmi, k.match) {
			return k.name, "DMI: " + dmi
		}
	}
	if t, ok := read("sys/hypervisor/type"); ok && t != "" {
		return t, "/sys/hypervisor/type"
	}
	if flags["hypervisor"] {
		if dmi != "" {
			return "vm", "cpuinfo hypervisor flag; DMI: " + dmi
		}
		return "vm", "cpuinfo hypervisor flag; the hypervisor does not name itself (no DMI)"
	}
	return "none", "no hypervisor flag in cpuinfo"
}

// parseStatus reads the effective uid and capabilities from
// /proc/self/status.
func parseStatus(b []byte) privileges {
	p := privileges{EUID: -1}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		switch k {
		case "Uid":
			if len(f) >= 2 {
				if n, err := strconv.Atoi(f[1]); err == nil {
					p.EUID = n
				}
			}
		case "CapEff":
			if len(f) == 1 {
				if n, err := strconv.ParseUint(f[0], 16, 64); err == nil {
					p.Effective, p.Known = n, true
				}
			}
		}
	}
	return p
}

// parseNoFile reads "Max open files" from /proc/self/limits.
func parseNoFile(b []byte) limit {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "Max open files") {
			continue
		}
		f := strings.Fields(strings.TrimPrefix(line, "Max open files"))
		if len(f) < 2 {
			return limit{}
		}
		soft, err1 := parseLimit(f[0])
		hard, err2 := parseLimit(f[1])
		if err1 != nil || err2 != nil {
			return limit{}
		}
		return limit{Soft: soft, Hard: hard, Known: true}
	}
	return limit{}
}

func parseLimit(s string) (uint64, error) {
	if s == "unlimited" {
		return unlimited, nil
	}
	return strconv.ParseUint(s, 10, 64)
}

// traceFSMount finds where tracefs is mounted in /proc/mounts, preferring
// /sys/kernel/tracing.
func traceFSMount(b []byte) string {
	var found []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && f[2] == "tracefs" {
			found = append(found, f[1])
		}
	}
	sort.Slice(found, func(i, j int) bool {
		return found[i] == "/sys/kernel/tracing" || found[j] != "/sys/kernel/tracing" && found[i] < found[j]
	})
	if len(found) == 0 {
		return ""
	}
	return found[0]
}

// threads counts the threads of process pid under root (/proc/PID/task).
func threads(root string, pid int) (int, error) {
	tids, err := procfs.New(root).Proc(pid).Tasks()
	if err != nil {
		return 0, fmt.Errorf("count threads of pid %d: %w", pid, err)
	}
	return len(tids), nil
}
