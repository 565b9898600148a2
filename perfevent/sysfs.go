package perfevent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/internal/host/procfs"
)

// devicesDir is where the kernel lists event sources.
const devicesDir = "sys/bus/event_source/devices"

// traceFSDirs are where tracefs is mounted, newest convention first.
var traceFSDirs = []string{"sys/kernel/tracing", "sys/kernel/debug/tracing"}

// LoadSystem reads the PMUs under <root>/sys/bus/event_source/devices (type,
// format/, events/, caps/, cpus), finds tracefs under <root>/sys/kernel/tracing
// or <root>/sys/kernel/debug/tracing, and reads perf_event_paranoid and the
// CPU identity from <root>/proc. Pass "/" for this machine; on it the core
// PMUs' counter budgets come from CPUID.
//
// It fails only when the devices folder cannot be read (a kernel without
// perf events, or /sys not mounted); smaller problems become Warnings.
func LoadSystem(root string) (*System, error) {
	s := &System{Root: root}
	dir := filepath.Join(root, devicesDir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list PMUs in %s: %w (is sysfs mounted, and the kernel built with perf events?): %w", dir, err, ErrNotSupported)
	}
	for _, ent := range ents {
		p, err := loadPMU(filepath.Join(dir, ent.Name()), ent.Name(), &s.Warnings)
		if err != nil {
			s.Warnings = append(s.Warnings, err.Error())
			continue
		}
		s.PMUs = append(s.PMUs, p)
	}
	sort.Slice(s.PMUs, func(i, j int) bool { return s.PMUs[i].Name < s.PMUs[j].Name })

	for _, d := range traceFSDirs {
		ev := filepath.Join(root, d, "events")
		if st, err := os.Stat(ev); err == nil && st.IsDir() {
			s.TraceFS = ev
			break
		}
	}
	proc := procfs.New(root)
	if n, err := proc.PerfEventParanoid(); err == nil {
		s.Paranoid = &n
	}
	if b, err := proc.ReadFile("cpuinfo"); err == nil {
		s.CPU = parseCPUInfo(b)
	}
	real := false
	if abs, err := filepath.Abs(root); err == nil && abs == "/" {
		real = true
	}
	s.setBudget(real)
	return s, nil
}

func loadPMU(dir, name string, warnings *[]string) (*PMU, error) {
	b, err := os.ReadFile(filepath.Join(dir, "type"))
	if err != nil {
		return nil, fmt.Errorf("read type of PMU %s: %w", name, err)
	}
	t, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("read type of PMU %s: %q is not a number", name, strings.TrimSpace(string(b)))
	}
	p := &PMU{Name: name, Type: uint32(t), Formats: map[string]format{}, Aliases: map[string]alias{}, Caps: map[string]string{}}
	hasCPUs := false
	for _, f := range []string{"cpus", "cpumask"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			p.CPUs = strings.TrimSpace(string(b))
			hasCPUs = hasCPUs || f == "cpus"
			break
		}
	}
	p.Core = isCorePMU(name, hasCPUs)

	for term, text := range readDirFiles(filepath.Join(dir, "format")) {
		f, err := parseFormat(text)
		if err != nil {
			*warnings = append(*warnings, fmt.Sprintf("PMU %s: format/%s: %v", name, term, err))
			continue
		}
		p.Formats[term] = f
	}
	events := readDirFiles(filepath.Join(dir, "events"))
	for file, text := range events {
		if strings.HasSuffix(file, ".scale") || strings.HasSuffix(file, ".unit") ||
			strings.HasSuffix(file, ".per-pkg") || strings.HasSuffix(file, ".snapshot") {
			continue
		}
		a := alias{Name: file, Terms: strings.Join(strings.Fields(text), "")}
		a.Unit = strings.TrimSpace(events[file+".unit"])
		if sc, ok := events[file+".scale"]; ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(sc), 64)
			if err != nil {
				*warnings = append(*warnings, fmt.Sprintf("PMU %s: events/%s.scale: %q is not a number", name, file, strings.TrimSpace(sc)))
			} else {
				a.Scale = v
			}
		}
		p.Aliases[strings.ToLower(file)] = a
	}
	for k, v := range readDirFiles(filepath.Join(dir, "caps")) {
		p.Caps[k] = strings.TrimSpace(v)
	}
	return p, nil
}

// readDirFiles returns the regular files of dir and their contents; a
// missing dir gives an empty map.
func readDirFiles(dir string) map[string]string {
	out := map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		out[e.Name()] = string(b)
	}
	return out
}

// parseCPUInfo reads the first processor block of /proc/cpuinfo.
func parseCPUInfo(b []byte) cpuInfo {
	var c cpuInfo
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	seen := false
	for sc.Scan() {
		line := sc.Text()
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			if strings.TrimSpace(line) == "" && seen {
				break
			}
			continue
		}
		seen = true
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "vendor_id":
			c.Vendor = v
		case "cpu family":
			c.Family, _ = strconv.Atoi(v)
		case "model":
			c.Model, _ = strconv.Atoi(v)
		case "stepping":
			c.Stepping, _ = strconv.Atoi(v)
		case "flags":
			c.Flags = strings.Fields(v)
			sort.Strings(c.Flags)
		}
	}
	return c
}

// errNoTraceFS is wrapped by errors about tracepoints when tracefs is not
// mounted.
var errNoTraceFS = errors.New("tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)")

// TracepointID returns the id of tracepoint sub:name from tracefs.
func (s *System) TracepointID(sub, name string) (uint64, error) {
	if s == nil || s.TraceFS == "" {
		return 0, fmt.Errorf("find tracepoint %s:%s: %w: %w", sub, name, errNoTraceFS, ErrNotSupported)
	}
	if !validTraceName(sub) || !validTraceName(name) {
		return 0, fmt.Errorf("find tracepoint %s:%s: %w", sub, name, errUnknownEvent)
	}
	b, err := os.ReadFile(filepath.Join(s.TraceFS, sub, name, "id"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if st, err := os.Stat(filepath.Join(s.TraceFS, sub, name)); err == nil && st.IsDir() {
				return 0, fmt.Errorf("tracepoint %s:%s has no id in tracefs (an ftrace-internal event perf cannot open): %w", sub, name, ErrNotSupported)
			}
			return 0, fmt.Errorf("%w: no tracepoint %s:%s%s", errUnknownEvent, sub, name, s.suggestTracepoint(sub, name))
		}
		return 0, fmt.Errorf("read id of tracepoint %s:%s: %w", sub, name, err)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read id of tracepoint %s:%s: %q is not a number", sub, name, strings.TrimSpace(string(b)))
	}
	return id, nil
}

// validTraceName keeps tracepoint names inside tracefs: no path separators,
// no "..", nothing empty.
func validTraceName(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Tracepoints lists every tracepoint in tracefs as "sub:name", sorted; like
// perf list, it leaves out ftrace-internal events that have no id.
func (s *System) Tracepoints() ([]string, error) {
	if s == nil || s.TraceFS == "" {
		return nil, errNoTraceFS
	}
	subs, err := os.ReadDir(s.TraceFS)
	if err != nil {
		return nil, fmt.Errorf("list tracepoints in %s: %w", s.TraceFS, err)
	}
	var out []string
	for _, sub := range subs {
		if !sub.IsDir() {
			continue
		}
		evs, err := os.ReadDir(filepath.Join(s.TraceFS, sub.Name()))
		if err != nil {
			continue
		}
		for _, ev := range evs {
			if ev.IsDir() && exists(filepath.Join(s.TraceFS, sub.Name(), ev.Name(), "id")) {
				out = append(out, sub.Name()+":"+ev.Name())
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// tracepointNames lists the events of one subsystem, or the subsystems
// when sub is empty.
func (s *System) tracepointNames(sub string) []string {
	if s == nil || s.TraceFS == "" {
		return nil
	}
	dir := s.TraceFS
	if sub != "" {
		if !validTraceName(sub) {
			return nil
		}
		dir = filepath.Join(dir, sub)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func (s *System) suggestTracepoint(sub, name string) string {
	if names := s.tracepointNames(sub); len(names) > 0 {
		if best := nearest(name, names); best != "" {
			return fmt.Sprintf(" (did you mean %q?)", sub+":"+best)
		}
		return ""
	}
	if best := nearest(sub, s.tracepointNames("")); best != "" {
		return fmt.Sprintf(" (no subsystem %q; did you mean %q?)", sub, best)
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
