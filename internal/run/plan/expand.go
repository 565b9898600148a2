package plan

import (
	"fmt"
	"strconv"
	"time"

	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/record"
)

// action is what one Item of an expanded plan does.
type action string

// Actions, in the order a version's block runs them.
const (
	// ActionStart starts a managed server (initializing its data directory
	// the first time).
	ActionStart action = "start"
	// ActionLoad loads the data set: sysbench cleanup, then prepare.
	ActionLoad action = "load"
	// ActionFlush runs the post-write flush (suite.Flush) before a read
	// step that follows write steps.
	ActionFlush action = "flush"
	// ActionMeasure runs a step at a thread count and writes its Record.
	ActionMeasure action = "measure"
	// ActionStop stops a managed server.
	ActionStop action = "stop"
)

// Item is one thing the runner does, in order.
type Item struct {
	Action action
	// ID is stable across hosts and runs of the same plan: for a
	// measurement it is measurementID of its version, step, threads and
	// repeat, so that --resume can match Records to it.
	ID      string
	Version *Version
	// Repeat is the repeat the item belongs to, from 1 (0 for a Stop of
	// all-running servers at the end of the plan).
	Repeat int
	// Step and Threads are set for ActionMeasure, and for ActionFlush
	// (the measurement the flush precedes).
	Step    *Step
	Threads int
	// Before is, for ActionFlush, the ID of the measurement it precedes.
	Before string
	// Comparison, for ActionMeasure of a step whose versions are measured
	// together, is the comparison's ID (comparisonID): the items of one
	// comparison come one after the other, and the runner measures them
	// at once.
	Comparison string
}

// Window returns the warm-up and measured durations of a measurement.
func (it Item) Window() (warmup, duration time.Duration) {
	if it.Step == nil {
		return 0, 0
	}
	return it.Step.Warmup, it.Step.Duration
}

// measurementID is the ID of the measurement of a version's step at a thread
// count and repeat: "<version>/<step label>/t<threads>/r<repeat>". Version
// labels cannot hold '/', so IDs are unambiguous.
func measurementID(version, step string, threads, repeat int) string {
	return version + "/" + step + "/t" + strconv.Itoa(threads) + "/r" + strconv.Itoa(repeat)
}

// RecordID is the measurementID a Record answers.
func RecordID(r *record.Record) string {
	return measurementID(r.Version, r.Step, r.Threads, r.Repeat)
}

// Expand turns the plan into the ordered list of things to do:
//
//	for each repeat r = 1..Repeats:
//	  for each version, in plan order (versions interleave: A B A B ...):
//	    start the server (managed versions; once, with servers = "all-running")
//	    load the data (the version's first block only, when Data.Load)
//	    for each step, for each of its thread counts:
//	      flush first when it is a read step and write steps ran on this
//	      version since its load or its last flush
//	      measure
//	    stop the server (managed versions, servers = "one-at-a-time")
//	stop the servers still running (servers = "all-running")
//
// Data is loaded once per version, so later repeats run on the data earlier
// repeats left (as published runs do).
func (p *Plan) Expand() []Item {
	if p.Compared() {
		return p.expandCompared()
	}
	var items []Item
	loaded := map[string]bool{}
	dirty := map[string]bool{}
	running := map[string]bool{}
	for r := 1; r <= p.Repeats; r++ {
		for vi := range p.Versions {
			v := &p.Versions[vi]
			if v.Managed != nil && !running[v.Label] {
				items = append(items, Item{Action: ActionStart, ID: fmt.Sprintf("start/%s/r%d", v.Label, r), Version: v, Repeat: r})
				running[v.Label] = true
			}
			if p.Data.Load && !loaded[v.Label] {
				items = append(items, Item{Action: ActionLoad, ID: "load/" + v.Label, Version: v, Repeat: r})
				loaded[v.Label] = true
				dirty[v.Label] = false
			}
			for si := range p.Steps {
				st := &p.Steps[si]
				for _, th := range st.Threads {
					id := measurementID(v.Label, st.Label, th, r)
					if !st.Write && dirty[v.Label] {
						items = append(items, Item{Action: ActionFlush, ID: "flush/" + id, Version: v, Repeat: r,
							Step: st, Threads: th, Before: id})
						dirty[v.Label] = false
					}
					items = append(items, Item{Action: ActionMeasure, ID: id, Version: v, Repeat: r, Step: st, Threads: th})
					if st.Write {
						dirty[v.Label] = true
					}
				}
			}
			if v.Managed != nil && p.Servers == serversOneAtATime {
				items = append(items, Item{Action: ActionStop, ID: fmt.Sprintf("stop/%s/r%d", v.Label, r), Version: v, Repeat: r})
				running[v.Label] = false
			}
		}
	}
	if p.Servers == serversAllRunning {
		for vi := range p.Versions {
			v := &p.Versions[vi]
			if running[v.Label] {
				items = append(items, Item{Action: ActionStop, ID: "stop/" + v.Label, Version: v})
			}
		}
	}
	return items
}

// Measurements counts the ActionMeasure items.
func Measurements(items []Item) int {
	n := 0
	for _, it := range items {
		if it.Action == ActionMeasure {
			n++
		}
	}
	return n
}

// Pending returns the items still to do. done reports the measurements
// that have Records already (perfbench run --resume); selected, when not
// nil, the measurements to run at all (perfbench run --only). Of the other
// items, a flush is kept only before a measurement that is kept; a load only
// when something of its version is kept and no measurement of the version is
// done (then the data is there, changed by what ran); a start and its stop
// only around something kept.
func Pending(items []Item, done, selected func(Item) bool) []Item {
	keep := make([]bool, len(items))
	versionDone := map[string]bool{}
	versionKept := map[string]bool{}
	measured := map[string]bool{}
	for i, it := range items {
		if it.Action != ActionMeasure {
			continue
		}
		if done != nil && done(it) {
			versionDone[it.Version.Label] = true
			continue
		}
		if selected == nil || selected(it) {
			keep[i] = true
			measured[it.ID] = true
			versionKept[it.Version.Label] = true
		}
	}
	for i, it := range items {
		switch it.Action {
		case ActionFlush:
			keep[i] = measured[it.Before]
		case ActionLoad:
			keep[i] = versionKept[it.Version.Label] && !versionDone[it.Version.Label]
		}
	}
	for i, it := range items {
		if it.Action != ActionStart {
			continue
		}
		// Keep a start and its stop when something of the version is kept
		// in between.
		j := i + 1
		for j < len(items) && !(items[j].Action == ActionStop && items[j].Version == it.Version) {
			j++
		}
		for k := i + 1; k < j; k++ {
			if keep[k] && items[k].Version == it.Version {
				keep[i] = true
				if j < len(items) {
					keep[j] = true
				}
				break
			}
		}
	}
	var out []Item
	for i, it := range items {
		if keep[i] {
			out = append(out, it)
		}
	}
	return out
}

// SysbenchOptions returns the sysbench options of a measurement (or, for
// a load, of the data set), given the connection options of its server
// (Host, Port, Socket; ScriptDir; Tail). The data set, credentials, threads,
// warm-up, window and report interval come from the plan.
func (p *Plan) SysbenchOptions(it Item, conn suite.Options) suite.Options {
	o := conn
	o.Sysbench = p.Data.Sysbench
	o.User, o.Password, o.DB = p.Data.User, p.Data.Password, p.Data.DB
	o.Tables, o.TableSize = p.Data.Tables, p.Data.TableSize
	o.RandType = p.Data.RandType
	o.ReportInterval = p.Interval
	o.Extra = nil
	if it.Version != nil && it.Version.Engine != "" {
		// First, so that extra_args may override it.
		o.Extra = append(o.Extra, "--mysql-storage-engine="+it.Version.Engine)
	}
	o.Extra = append(append(o.Extra, p.Data.ExtraArgs...), conn.Extra...)
	if it.Step != nil {
		o.Threads = it.Threads
		o.Warmup, o.Time = it.Step.Warmup, it.Step.Duration
		o.Extra = append(o.Extra, it.Step.ExtraArgs...)
	}
	return o
}
