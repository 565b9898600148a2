package plan

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

const comparedPlan = `
[run]
repeats = 2
[steps]
list = ["point-query_range=100", "update-one_range=100", "scan_range=100", "chk"]
[[steps.custom]]
name = "chk"
command = ["sleep", "{time}"]
[[version]]
label = "A"
basedir = "installed"
[[version]]
label = "B"
basedir = "installed"
`

func TestExpandCompared(t *testing.T) {
	p := mustParse(t, comparedPlan)
	if p.Compare != CompareAuto || p.Slice != time.Second || p.Servers != serversAllRunning {
		t.Errorf("compare %q, slice %v, servers %q; want auto, 1s, all-running", p.Compare, p.Slice, p.Servers)
	}
	items := p.Expand()
	want := []string{
		"start start/A/r1",
		"start start/B/r1",
		"load load/A",
		"load load/B",
		"measure A/point-query_range=100/t1/r1",
		"measure B/point-query_range=100/t1/r1",
		"measure A/update-one_range=100/t1/r1",
		"measure B/update-one_range=100/t1/r1",
		// Both versions wrote: both are flushed before the read step.
		"flush flush/A/scan_range=100/t1/r1",
		"flush flush/B/scan_range=100/t1/r1",
		"measure A/scan_range=100/t1/r1",
		"measure B/scan_range=100/t1/r1",
		// A custom step: windows, one version after the other.
		"measure A/chk/t1/r1",
		"measure B/chk/t1/r1",
		"measure A/point-query_range=100/t1/r2",
		"measure B/point-query_range=100/t1/r2",
		"measure A/update-one_range=100/t1/r2",
		"measure B/update-one_range=100/t1/r2",
		"flush flush/A/scan_range=100/t1/r2",
		"flush flush/B/scan_range=100/t1/r2",
		"measure A/scan_range=100/t1/r2",
		"measure B/scan_range=100/t1/r2",
		"measure A/chk/t1/r2",
		"measure B/chk/t1/r2",
		"stop stop/A",
		"stop stop/B",
	}
	if got := actions(items); !reflect.DeepEqual(got, want) {
		t.Errorf("Expand:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, it := range items {
		if it.Action != ActionMeasure {
			continue
		}
		wantID := comparisonID(it.Step.Label, it.Threads, it.Repeat)
		if it.Step.Custom() {
			wantID = ""
		}
		if it.Comparison != wantID {
			t.Errorf("%s: comparison %q, want %q", it.ID, it.Comparison, wantID)
		}
	}
}

func TestCompareWindowsKeepsOrder(t *testing.T) {
	p := mustParse(t, strings.Replace(comparedPlan, "repeats = 2", "repeats = 2\ncompare = \"windows\"", 1))
	if p.Compared() || p.Servers != serversOneAtATime {
		t.Fatalf("compare = windows: compared %v, servers %q", p.Compared(), p.Servers)
	}
	for _, it := range p.Expand() {
		if it.Comparison != "" {
			t.Errorf("%s is in comparison %q under compare = windows", it.ID, it.Comparison)
		}
	}
	// One version alone: nothing to compare.
	one := mustParse(t, comparedPlan[:strings.LastIndex(comparedPlan, "[[version]]")])
	if one.Compared() {
		t.Error("a plan of one version compares")
	}
	// servers = one-at-a-time under auto: windows.
	if p := mustParse(t, strings.Replace(comparedPlan, "repeats = 2", "repeats = 2\nservers = \"one-at-a-time\"", 1)); p.Compared() {
		t.Error("servers = one-at-a-time with compare auto still compares")
	}
}

func TestCompareErrors(t *testing.T) {
	for _, c := range []struct {
		name, set, want string
	}{
		{"unknown mode", `compare = "twin"`, `3: compare "twin": use "auto"`},
		{"slice too short", `slice = "100ms"`, `3: slice 100ms: use 250ms to 1m0s`},
		{"slice too long", `slice = "2m"`, `3: slice 2m0s: use 250ms to 1m0s`},
		{"custom step forced", `compare = "slices"`, `3: compare "slices" cannot measure step chk (line 6): a custom step's command cannot be paused or paired`},
		{"one at a time forced", "compare = \"duet\"\nservers = \"one-at-a-time\"", `3: compare "duet" runs every version's server at once`},
		{"duet with split", "compare = \"duet\"\nplacement = \"split\"", `3: compare "duet" places every version on CPUs of its own`},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(comparedPlan, "repeats = 2", c.set+"\nrepeats = 2", 1)
			errs := parseErrors(t, src)
			found := false
			for _, e := range errs {
				found = found || strings.HasPrefix(e, c.want)
			}
			if !found {
				t.Errorf("errors %q, want one starting %q", errs, c.want)
			}
		})
	}
	// A client op count under duet: the step is refused.
	src := strings.Replace(comparedPlan, "repeats = 2", "compare = \"duet\"\nops = \"client.queries\"\nrepeats = 2", 1)
	src = strings.Replace(src, `, "chk"]`, `]`, 1)
	src = src[:strings.Index(src, "[[steps.custom]]")] + src[strings.Index(src, "[[version]]"):]
	errs := parseErrors(t, src)
	if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), "its op count (client.queries) is the client's") {
		t.Errorf("client ops under duet: %q", errs)
	}
}

func TestWholeComparisons(t *testing.T) {
	p := mustParse(t, comparedPlan)
	all := p.Expand()
	// B's update-one of repeat 1 failed: A's is measured again with it,
	// and the flushes before scan stay with the measurements they precede.
	done := func(it Item) bool { return it.ID != "B/update-one_range=100/t1/r1" }
	pending := WholeComparisons(all, Pending(all, done, nil))
	var got []string
	for _, it := range pending {
		if it.Action == ActionMeasure || it.Action == ActionFlush {
			got = append(got, string(it.Action)+" "+it.ID)
		}
	}
	want := []string{
		"measure A/update-one_range=100/t1/r1",
		"measure B/update-one_range=100/t1/r1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pending: %q, want %q", got, want)
	}
	// Nothing pending: nothing added.
	if got := WholeComparisons(all, nil); len(got) != 0 {
		t.Errorf("nothing pending gave %d items", len(got))
	}
}
