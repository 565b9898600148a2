package measure

import (
	"fmt"
	"strings"

	"github.com/perfbench/perfbench/perfevent"
)

// HardwareEvents are the hardware counters published per-query tables use
// (shared/reference/metrics.md, first groups), counted where the PMU has them.
var HardwareEvents = []string{"cycles", "instructions", "cache-references", "cache-misses", "branches", "branch-misses"}

// softwareEvents are counted on every Linux machine, VMs included.
var softwareEvents = []string{"task-clock", "context-switches", "cpu-migrations", "page-faults"}

// DefaultEvents returns the event list to count when the user gave none: the
// hardware events that open on process pid (probe) followed by the software
// ones, or the software ones alone, and a sentence saying which set and why.
// probe opens an event on pid and closes it; nil means sys.ProbePid.
func DefaultEvents(sys *perfevent.System, pid int, probe func(perfevent.Event, int) error) (spec, why string) {
	sw := strings.Join(softwareEvents, ",")
	if sys == nil {
		return sw, "software events (no perf event sources could be read)"
	}
	if !sys.HasHardwarePMU() {
		return sw, "software events: this machine has no hardware PMU (a VM without a virtual PMU?), so cycles, instructions and cache events cannot be counted"
	}
	if probe == nil {
		probe = sys.ProbePid
	}
	var ok, missing []string
	for _, name := range HardwareEvents {
		l, err := perfevent.Parse(name, sys)
		if err == nil && len(l.Events) == 1 && probe(l.Events[0], pid) == nil {
			ok = append(ok, name)
		} else {
			missing = append(missing, name)
		}
	}
	if len(ok) == 0 {
		return sw, "software events: no hardware event opens on this PMU"
	}
	spec = strings.Join(append(ok, softwareEvents...), ",")
	why = "hardware and software events"
	if len(missing) > 0 {
		why += fmt.Sprintf(" (the PMU does not count %s)", strings.Join(missing, ", "))
	}
	return spec, why
}
