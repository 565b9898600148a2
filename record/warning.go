package record

import (
	"fmt"
	"slices"
)

// Warning is a condition that weakens a Record's numbers without voiding
// them. Code says which numbers it concerns, so that a report prints it
// under those tables only; Text says it to the user.
type Warning struct {
	Code Code `json:"code"`
	// Events are the counters a multiplexed or not-counted warning
	// concerns, by canonical name (never empty for those codes).
	Events []string `json:"events,omitempty"`
	// Roles are the thread roles a roles warning concerns; empty, it
	// concerns the split by role as a whole.
	Roles []string `json:"roles,omitempty"`
	// Text is the warning as every renderer prints it.
	Text string `json:"text"`
}

// Code is what a Warning concerns. The set is closed: Parse refuses a code
// it does not know.
type Code string

// Warning codes. Each comment says what the warning means and which
// numbers it concerns.
const (
	// WarnMultiplexed: Events were multiplexed (they ran part of the
	// window; their values are scaled). Concerns those events' values.
	WarnMultiplexed Code = "multiplexed"
	// WarnNotCounted: Events were enabled but never counted (never
	// scheduled, or lost). Concerns those events' values.
	WarnNotCounted Code = "not-counted"
	// WarnRoles: the split of the counters by thread role is coarser or
	// less sure than usual (how roles were named; threads counted through
	// their creator; no split). Concerns the shares by role (of Roles, or
	// all of them when Roles is empty).
	WarnRoles Code = "roles"
	// WarnIONotMeasured: the server's /proc/PID/io was not read: OS's
	// read_bytes, write_bytes, rchar, wchar, syscr and syscw are not
	// measurements. Concerns the IO values (KB per op then come from the
	// device's sectors).
	WarnIONotMeasured Code = "io-not-measured"
	// WarnIO: another condition on the server's /proc/PID/io counts (one
	// went backwards and counts as 0). Concerns the IO values.
	WarnIO Code = "io"
	// WarnHostCPUNotMeasured: the host's busy CPU time was not read:
	// OS.HostCPUSeconds is not a measurement. Concerns the CPU values.
	WarnHostCPUNotMeasured Code = "host-cpu-not-measured"
	// WarnCSSplit: threads exited inside the window, so /proc's
	// voluntary/involuntary context switch split misses theirs (the
	// context-switches counter keeps them). Concerns the CPU values.
	WarnCSSplit Code = "cs-split"
	// WarnOpsNotCounted: the op source has no count for the window
	// (Ops.Counted is unset); the text says why. Concerns every per-op
	// value.
	WarnOpsNotCounted Code = "ops-not-counted"
	// WarnOpsEstimated: the op count was estimated from a rate over
	// another span (Ops.Estimated is set); the text says how. Concerns
	// every per-op value.
	WarnOpsEstimated Code = "ops-estimated"
	// WarnBusy: processes other than the server, the load client and
	// perfbench used more of the host's CPU over the window than
	// measure.busyCPUs and measure.busyShare allow (Interference says how
	// much and who). Concerns every number of the Record.
	WarnBusy Code = "busy"
	// WarnCPUGap: task-clock was further from the CPU time the kernel
	// charged to what was counted (KernelCPU) than ordinary windows are:
	// more than the scheduler's charging from wake-ups explains per
	// context switch, or, counted per thread, short of it by more than
	// per-thread counters miss at switches, starts and exits. Concerns
	// every counter's count per op.
	WarnCPUGap Code = "cpu-gap"
	// WarnGeneral: any other condition. Concerns every number of the
	// Record.
	WarnGeneral Code = "general"
)

// codes is the closed set of Codes, with whether a warning of the code
// must name events.
var codes = map[Code]bool{
	WarnMultiplexed: true, WarnNotCounted: true,
	WarnRoles: false, WarnIONotMeasured: false, WarnIO: false, WarnHostCPUNotMeasured: false,
	WarnCSSplit: false, WarnOpsNotCounted: false, WarnOpsEstimated: false, WarnBusy: false, WarnCPUGap: false, WarnGeneral: false,
}

// validate checks that w has a known code and, when its code needs them,
// events.
func (w Warning) validate() error {
	needsEvents, ok := codes[w.Code]
	switch {
	case !ok:
		return fmt.Errorf("warning %q has unknown code %q", w.Text, w.Code)
	case needsEvents && len(w.Events) == 0:
		return fmt.Errorf("warning %q has code %s but names no event", w.Text, w.Code)
	}
	return nil
}

// AddWarning appends each warning r does not have yet (same code, events,
// roles and text): a condition is said once.
func (r *Record) AddWarning(ws ...Warning) {
	for _, w := range ws {
		if !slices.ContainsFunc(r.Warnings, w.equal) {
			r.Warnings = append(r.Warnings, w)
		}
	}
}

func (w Warning) equal(o Warning) bool {
	return w.Code == o.Code && w.Text == o.Text && slices.Equal(w.Events, o.Events) && slices.Equal(w.Roles, o.Roles)
}

// Warnf adds a warning of the given code with no events or roles, its text
// formatted as by fmt.Sprintf.
func (r *Record) Warnf(code Code, format string, args ...any) {
	r.AddWarning(Warning{Code: code, Text: fmt.Sprintf(format, args...)})
}

// WarningTexts returns the texts of the Record's warnings, in order.
func (r *Record) WarningTexts() []string {
	out := make([]string, len(r.Warnings))
	for i, w := range r.Warnings {
		out[i] = w.Text
	}
	return out
}
