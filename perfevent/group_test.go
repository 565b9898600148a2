package perfevent

import "testing"

func TestPlanLayout(t *testing.T) {
	hw := func(name string, config uint64) Event {
		return Event{Name: name, Kind: KindHardware, Encodings: []Encoding{{PMU: "cpu", Type: 0, Config: config}}}
	}
	sw := func(name string, config uint64) Event {
		return Event{Name: name, Kind: KindSoftware, Encodings: []Encoding{{PMU: "software", Type: 1, Config: config}}}
	}
	cyc, ins, refs, miss, br, brm := hw("cycles", 0), hw("instructions", 1), hw("cache-references", 2), hw("cache-misses", 3), hw("branches", 4), hw("branch-misses", 5)
	tc, cs, pf := sw("task-clock", 1), sw("context-switches", 3), sw("page-faults", 2)
	tsc := Event{Name: "msr/tsc/", Kind: KindPMU, Encodings: []Encoding{{PMU: "msr", Type: 9}}}
	none := Event{Name: "cycles", Kind: KindHardware}
	for _, tc := range []struct {
		name    string
		events  []Event
		groups  [][]int
		budgets map[string]int
		want    string
	}{
		{"software events alone", []Event{tc, cs, pf}, nil, nil, "task-clock,context-switches,page-faults"},
		{"cycles and instructions lead their PMU's first group", []Event{miss, br, ins, brm, cyc}, nil, nil, "{cycles,instructions,cache-misses,branches},branch-misses"},
		{"per PMU", []Event{tc, miss, tsc, cyc, pf}, nil, nil, "task-clock,page-faults,{cycles,cache-misses},msr/tsc/"},
		{"budget from the catalogue", []Event{cyc, ins, refs, miss, br, brm}, nil, map[string]int{"cpu": 6}, "{cycles,instructions,cache-references,cache-misses,branches,branch-misses}"},
		{"small budget", []Event{refs, miss, cyc, ins, br}, nil, map[string]int{"cpu": 2}, "{cycles,instructions},{cache-references,cache-misses},branches"},
		{"user groups kept as given", []Event{cyc, miss, ins, br}, [][]int{{1, 0}}, nil, "{cache-misses,cycles},{instructions,branches}"},
		{"software joins a user hardware group", []Event{tc, miss}, [][]int{{0, 1}}, nil, "{cache-misses,task-clock}"},
		{"user group of software", []Event{cyc, tc, pf}, [][]int{{2, 1}}, nil, "{page-faults,task-clock},cycles"},
		{"event without encoding opens nothing", []Event{none, tc}, nil, nil, "task-clock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lay, err := planLayout(tc.events, tc.groups, tc.budgets)
			if err != nil {
				t.Fatal(err)
			}
			if got := lay.describe(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestPlanLayoutHybridUserGroup(t *testing.T) {
	hyb := func(name string, config uint64) Event {
		return Event{Name: name, Kind: KindHardware, Encodings: []Encoding{
			{PMU: "cpu_core", Type: 0, Config: 4<<32 | config},
			{PMU: "cpu_atom", Type: 0, Config: 8<<32 | config},
		}}
	}
	pf := Event{Name: "page-faults", Kind: KindSoftware, Encodings: []Encoding{{PMU: "software", Type: 1, Config: 2}}}
	lay, err := planLayout([]Event{hyb("cycles", 0), pf, hyb("instructions", 1)}, [][]int{{0, 1, 2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "{cycles on cpu_core,instructions on cpu_core,page-faults},{cycles on cpu_atom,instructions on cpu_atom}"
	if got := lay.describe(); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestPlanLayoutErrors(t *testing.T) {
	e := Event{Name: "task-clock", Kind: KindSoftware, Encodings: []Encoding{{PMU: "software", Type: 1, Config: 1}}}
	for _, groups := range [][][]int{{{}}, {{0, 1}}, {{-1}}, {{0}, {0}}} {
		if _, err := planLayout([]Event{e}, groups, nil); err == nil {
			t.Errorf("groups %v accepted", groups)
		}
	}
}

func TestLayoutDrop(t *testing.T) {
	hw := func(name string, config uint64) Event {
		return Event{Name: name, Kind: KindHardware, Encodings: []Encoding{{PMU: "cpu", Type: 0, Config: config}}}
	}
	lay, err := planLayout([]Event{hw("cycles", 0), hw("instructions", 1), hw("branches", 4)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	lay.drop(0, "gone")
	if got := lay.describe(); got != "{instructions,branches}" {
		t.Errorf("after dropping the leader: %s", got)
	}
	lay.renumber()
	if lay.groupNumber(lay.parts[1].group) != 1 || lay.parts[0].group != -1 || lay.eventReason(0) != "gone" {
		t.Errorf("parts %+v", lay.parts)
	}
}
