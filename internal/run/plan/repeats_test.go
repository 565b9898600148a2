package plan

import (
	"reflect"
	"strings"
	"testing"
)

// TestAutoRepeats: repeats = "auto" takes precision and max_repeats (or
// their defaults), expands to max_repeats rounds, and refuses what would
// not work, each on its line.
func TestAutoRepeats(t *testing.T) {
	p := mustParse(t, "[run]\nrepeats = \"auto\"\nretry_busy = 2\n"+minimal)
	if p.Auto == nil || *p.Auto != (AutoRepeats{Precision: 0.02, Max: 10}) || p.Repeats != 10 || p.RetryBusy != 2 {
		t.Errorf("defaults: auto %+v, repeats %d, retry_busy %d", p.Auto, p.Repeats, p.RetryBusy)
	}
	if n := Measurements(p.Expand()); n != 10 {
		t.Errorf("auto expands to %d measurements, want 10 (max_repeats rounds)", n)
	}
	p = mustParse(t, "[run]\nrepeats = \"auto\"\nprecision = 0.05\nmax_repeats = 6\n"+minimal)
	if *p.Auto != (AutoRepeats{Precision: 0.05, Max: 6}) || p.Repeats != 6 {
		t.Errorf("auto %+v, repeats %d", p.Auto, p.Repeats)
	}
	p = mustParse(t, "[run]\nrepeats = 3\n"+minimal)
	if p.Auto != nil || p.Repeats != 3 || p.RetryBusy != 0 {
		t.Errorf("repeats = 3: auto %+v, repeats %d", p.Auto, p.Repeats)
	}
	for src, want := range map[string]string{
		"[run]\nrepeats = \"often\"\n":                   `2: repeats "often": give a number of repeats, or "auto" to repeat until run.precision is reached`,
		"[run]\nrepeats = \"auto\"\nmax_repeats = 5\n":   "3: max_repeats is 5, must be 6 to 1000: the rQPS interval needs 6 repeats of each version",
		"[run]\nrepeats = \"auto\"\nprecision = 2\n":     "3: precision 2: give the half-width wanted of the rQPS interval as a fraction, 0.02 for ±2%",
		"[run]\nrepeats = 4\nprecision = 0.01\n":         `3: precision and max_repeats go with repeats = "auto": set it, or leave them out`,
		"[run]\nretry_busy = -1\n":                       "2: retry_busy is -1, must be 0 to 10 (how many times a window flagged busy is measured again)",
		"[run]\nrepeats = \"auto\"\nprecision = -0.01\n": "3: precision -0.01: give the half-width wanted of the rQPS interval as a fraction, 0.02 for ±2%",
	} {
		got := parseErrors(t, src+minimal)
		if len(got) != 1 || !strings.Contains(got[0], want) {
			t.Errorf("%q: errors %q, want %q", src, got, want)
		}
	}
}

// TestAAOf: aa_of names the version measured again; a managed version that
// starts the same server as an earlier one is its twin without it; a
// different option, or a twin of a twin, is not.
func TestAAOf(t *testing.T) {
	p := mustParse(t, `
[steps]
list = ["point-query"]
[[version]]
label = "a"
basedir = "installed"
options = ["skip-log-bin"]
[[version]]
label = "b"
basedir = "installed"
options = ["log-bin"]
[[version]]
label = "a2"
basedir = "installed"
options = ["skip-log-bin"]
[[version]]
label = "a3"
basedir = "installed"
options = ["skip-log-bin"]
[[version]]
label = "r"
socket = "/run/mysqld.sock"
[[version]]
label = "r2"
socket = "/run/mysqld.sock"
aa_of = "r"
`)
	got := map[string]string{}
	for _, v := range p.Versions {
		got[v.Label] = v.AAOf
	}
	want := map[string]string{"a": "", "b": "", "a2": "a", "a3": "a", "r": "", "r2": "r"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("aa_of %v, want %v", got, want)
	}
	errs := parseErrors(t, `
[steps]
list = ["point-query"]
[[version]]
label = "a"
socket = "/run/a.sock"
[[version]]
label = "b"
socket = "/run/a.sock"
aa_of = "c"
[[version]]
label = "d"
socket = "/run/a.sock"
aa_of = "d"
`)
	want2 := []string{
		`10: version "b": aa_of "c" is not the label of a version`,
		`14: version "d": aa_of names the version itself: name the version it measures again`,
	}
	if !reflect.DeepEqual(errs, want2) {
		t.Errorf("errors\n%q\nwant\n%q", errs, want2)
	}
}
