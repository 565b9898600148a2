package hostinfo

import (
	"errors"
	"strings"
	"testing"
)

func TestParanoidCheck(t *testing.T) {
	level := func(n int) *int { return &n }
	user := privileges{EUID: 1000, Known: true}
	perfmon := privileges{EUID: 1000, Known: true, Effective: 1 << capPerfmon}
	bareRoot := privileges{EUID: 0, Known: true}
	tests := []struct {
		name    string
		p       *int
		pv      privileges
		verdict Verdict
		detail  string // the start of the detail
		fix     string // the start of the fix; "" for none
	}{
		{"missing", nil, user, Fail, "/proc/sys/kernel/perf_event_paranoid is missing", "boot a kernel"},
		{"-1 for a user", level(-1), user, OK, "-1 (", ""},
		{"1 for a user", level(1), user, OK, "1 (", ""},
		{"2 for a user", level(2), user, Warn, "2 (", "sysctl kernel.perf_event_paranoid=1, or run as root"},
		{"3 for a user", level(3), user, Fail, "3 (", "run as root, grant CAP_PERFMON"},
		{"4 with CAP_PERFMON", level(4), perfmon, OK, "4 (", ""},
		{"2 for root without capabilities", level(2), bareRoot, Warn, "2 (", "sysctl kernel.perf_event_paranoid=1, or perfbench runs as root but"},
		{"3 for root without capabilities", level(3), bareRoot, Fail, "3 (", "sysctl kernel.perf_event_paranoid=1, or perfbench runs as root but"},
		{"1 for root without capabilities", level(1), bareRoot, OK, "1 (", ""},
	}
	for _, tt := range tests {
		c := paranoidCheck(tt.p, tt.pv)
		if c.Name != "perf_event_paranoid" || c.Verdict != tt.verdict || !strings.HasPrefix(c.Detail, tt.detail) ||
			tt.fix == "" && c.Fix != "" || tt.fix != "" && !strings.HasPrefix(c.Fix, tt.fix) {
			t.Errorf("%s: got %s %q fix %q; want %s %q… fix %q…", tt.name, c.Verdict, c.Detail, c.Fix, tt.verdict, tt.detail, tt.fix)
		}
	}
}

func TestNMIWatchdogCheck(t *testing.T) {
	on, off := 1, 0
	tests := []struct {
		w       *int
		hasPMU  bool
		verdict Verdict
		detail  string
	}{
		{nil, true, OK, "not present"},
		{&off, false, OK, "off"},
		{&off, true, OK, "off: every hardware counter is free"},
		{&on, false, OK, "on, but there is no hardware PMU here for it to hold"},
		{&on, true, Warn, "on: it holds one hardware counter on every CPU"},
	}
	for _, tt := range tests {
		c := nmiWatchdogCheck(tt.w, tt.hasPMU)
		if c.Verdict != tt.verdict || !strings.HasPrefix(c.Detail, tt.detail) || (c.Verdict == Warn) != (c.Fix != "") {
			t.Errorf("nmiWatchdogCheck(%v, %v) = %s %q fix %q; want %s %q…", tt.w, tt.hasPMU, c.Verdict, c.Detail, c.Fix, tt.verdict, tt.detail)
		}
	}
}

func TestConclude(t *testing.T) {
	gone := errors.New("pid 42: no such process")
	ok, warn, fail := Check{Verdict: OK}, Check{Verdict: Warn}, Check{Verdict: Fail}
	tests := []struct {
		name   string
		checks []Check
		gone   error
		usable bool
		want   string
	}{
		{"no failure", []Check{ok, warn}, nil, true, "perfbench can count here"},
		{"one failure, the target's", []Check{ok, fail}, gone, false, "perfbench can count here, but not pid 42: pid 42: no such process"},
		{"one failure, not the target's", []Check{ok, fail}, nil, false, "perfbench cannot count here"},
		{"the target's and another failure", []Check{fail, fail}, gone, false, "perfbench cannot count here"},
	}
	for _, tt := range tests {
		usable, got := conclude(tt.checks, 42, tt.gone)
		if usable != tt.usable || got != tt.want {
			t.Errorf("%s: conclude = %v %q; want %v %q", tt.name, usable, got, tt.usable, tt.want)
		}
	}
}
