package demo

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/run/plan"
)

var older = &release{Version: "1:10.11.18-0+deb12u1", Upstream: "10.11.18",
	Dir: "/var/cache/perfbench/mariadb-10.11.18-0+deb12u1", Basedir: "/var/cache/perfbench/mariadb-10.11.18-0+deb12u1/usr"}

func labelsOf(vs []version) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Label
	}
	return out
}

func TestVersions(t *testing.T) {
	vs, base := versions("10.11.19", older)
	if want := []string{"10.11.18", "10.11.19", "10.11.19-binlog", "10.11.18-aa"}; !reflect.DeepEqual(labelsOf(vs), want) || base != "10.11.18" {
		t.Errorf("older release unpacked: versions %q base %q, want %q base 10.11.18", labelsOf(vs), base, want)
	}
	if vs[0].Basedir != older.Basedir || vs[1].Basedir != plan.Installed || vs[2].Basedir != plan.Installed {
		t.Errorf("basedirs %q %q %q", vs[0].Basedir, vs[1].Basedir, vs[2].Basedir)
	}
	if !reflect.DeepEqual(vs[1].Options, serverOptions) || !reflect.DeepEqual(vs[0].Options, serverOptions) {
		t.Errorf("releases do not run with the same options: %q, %q", vs[0].Options, vs[1].Options)
	}
	if want := append(append([]string(nil), serverOptions...), variantOptions...); !reflect.DeepEqual(vs[2].Options, want) {
		t.Errorf("variant options %q, want %q", vs[2].Options, want)
	}
	// The A/A twin is the base again: the same server, the same options.
	if tw := vs[3]; tw.AAOf != "10.11.18" || tw.Basedir != older.Basedir || !reflect.DeepEqual(tw.Options, serverOptions) {
		t.Errorf("A/A twin %+v", tw)
	}

	newer := &release{Version: "1:10.11.20-0+deb12u1", Upstream: "10.11.20", Basedir: "/c/usr"}
	vs, base = versions("10.11.19", newer)
	if want := []string{"10.11.19", "10.11.20", "10.11.19-binlog", "10.11.19-aa"}; !reflect.DeepEqual(labelsOf(vs), want) || base != "10.11.19" {
		t.Errorf("newer release unpacked: versions %q base %q, want %q base 10.11.19", labelsOf(vs), base, want)
	}

	vs, base = versions("10.11.19", nil)
	if want := []string{"10.11.19", "10.11.19-binlog", "10.11.19-aa"}; !reflect.DeepEqual(labelsOf(vs), want) || base != "10.11.19" {
		t.Errorf("no second release: versions %q base %q, want %q base 10.11.19", labelsOf(vs), base, want)
	}
}

func TestPlanTOML(t *testing.T) {
	tests := []struct {
		name     string
		s        settings
		quick    bool
		labels   []string
		threads  []int
		repeats  int
		warmup   time.Duration
		duration time.Duration
		// measurements, worked out by hand: steps × threads × repeats ×
		// versions (random-points runs at one thread in the full plan).
		measurements int
	}{
		{"quick", quickSettings, true,
			[]string{"point-query_range=100", "read-only_range=100", "update-index_range=100"},
			[]int{1}, 2, time.Second, 2 * time.Second, 3 * 1 * 2 * 4},
		{"full", fullSettings, false,
			[]string{"point-query_range=100", "random-points_range=100", "read-only_range=100", "update-index_range=100"},
			[]int{1, 2}, 3, time.Second, 3 * time.Second, (3*2 + 1) * 3 * 4},
	}
	vs, base := versions("10.11.19", older)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := planTOML(vs, base, tt.s, tt.quick)
			p, err := loadPlan(t, text)
			if err != nil {
				t.Fatalf("the plan does not parse: %v\n%s", err, text)
			}
			if p.Name != "demo" || p.Base != "10.11.18" || p.Repeats != tt.repeats || p.Interval != time.Second {
				t.Errorf("name %q base %q repeats %d interval %s", p.Name, p.Base, p.Repeats, p.Interval)
			}
			// Every server runs at once and each step's versions are
			// measured together.
			if p.Servers == "one-at-a-time" || p.Compare != plan.CompareAuto || p.Slice != time.Second || !p.Compared() {
				t.Errorf("servers %q compare %q slice %s compared %v", p.Servers, p.Compare, p.Slice, p.Compared())
			}
			if !reflect.DeepEqual(p.Events, events) {
				t.Errorf("events %q, want %q", p.Events, events)
			}
			var labels []string
			for _, st := range p.Steps {
				labels = append(labels, st.Label)
				threads := tt.threads
				if !tt.quick && st.Label == "random-points_range=100" {
					threads = []int{1}
				}
				if !reflect.DeepEqual(st.Threads, threads) || st.Warmup != tt.warmup || st.Duration != tt.duration {
					t.Errorf("%s: threads %v warm-up %s window %s", st.Label, st.Threads, st.Warmup, st.Duration)
				}
			}
			if !reflect.DeepEqual(labels, tt.labels) {
				t.Errorf("steps %q, want %q", labels, tt.labels)
			}
			if len(p.Versions) != 4 {
				t.Fatalf("%d versions", len(p.Versions))
			}
			if tw := p.Versions[3]; tw.Label != "10.11.18-aa" || tw.AAOf != "10.11.18" || tw.Managed == nil || tw.Managed.Basedir != older.Basedir {
				t.Errorf("A/A twin: %+v", tw)
			}
			if m := p.Versions[0].Managed; m == nil || m.Basedir != older.Basedir {
				t.Errorf("base version is not the unpacked release: %+v", p.Versions[0].Managed)
			}
			if m := p.Versions[2].Managed; m == nil || m.Basedir != plan.Installed ||
				!reflect.DeepEqual(m.Options[len(m.Options)-len(variantOptions):], variantOptions) {
				t.Errorf("variant: %+v", p.Versions[2].Managed)
			}
			if p.Data.TableSize != tt.s.TableSize || p.Data.Tables != 1 {
				t.Errorf("data %+v", p.Data)
			}
			items := p.Expand()
			if n := plan.Measurements(items); n != tt.measurements {
				t.Errorf("%d measurements, want %d", n, tt.measurements)
			}
			// Every server starts once, first; then each step's four
			// versions come together, one comparison each, repeat by
			// repeat.
			var order []string
			comparisons := map[string][]string{}
			for _, it := range items {
				switch {
				case it.Action == plan.ActionStart:
					order = append(order, it.Version.Label)
				case it.Action == plan.ActionMeasure:
					if it.Comparison == "" {
						t.Errorf("%s is not in a comparison", it.ID)
					}
					comparisons[it.Comparison] = append(comparisons[it.Comparison], it.Version.Label)
				}
			}
			if want := []string{"10.11.18", "10.11.19", "10.11.19-binlog", "10.11.18-aa"}; !reflect.DeepEqual(order, want) {
				t.Errorf("server starts in order %q, want %q", order, want)
			}
			if len(comparisons) != tt.measurements/4 {
				t.Errorf("%d comparisons, want %d", len(comparisons), tt.measurements/4)
			}
			for id, vs := range comparisons {
				if len(vs) != 4 {
					t.Errorf("comparison %s has versions %q", id, vs)
				}
			}
		})
	}
}

func TestPlanQuoting(t *testing.T) {
	// An unpacked tree in a folder with characters TOML must escape.
	odd := &release{Version: "1:10.11.18-0+deb12u1", Upstream: "10.11.18", Basedir: `/tmp/a "b" \c/usr`}
	vs, base := versions("10.11.19", odd)
	p, err := loadPlan(t, planTOML(vs, base, quickSettings, true))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Versions[0].Managed.Basedir; got != odd.Basedir {
		t.Errorf("basedir read back as %q, want %q", got, odd.Basedir)
	}
	if got := q("tab\there"); got != `"tab\u0009here"` {
		t.Errorf("q = %s", got)
	}
	if got := wrap("a bb ccc dddddd e", 4); !reflect.DeepEqual(got, []string{"a bb", "ccc", "dddddd", "e"}) {
		t.Errorf("wrap = %q", got)
	}
}

// loadPlan writes a plan to a file and loads it as perfbench run does.
func loadPlan(t *testing.T, text []byte) (*plan.Plan, error) {
	file := filepath.Join(t.TempDir(), "plan.toml")
	if err := os.WriteFile(file, text, 0o644); err != nil {
		t.Fatal(err)
	}
	return plan.Load(file)
}
