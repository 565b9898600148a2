package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfbench/perfbench/record"
)

// maxBusyListed is how many busy windows the report's note names; it
// counts the rest.
const maxBusyListed = 20

// busyNotes is the report's note on the windows flagged busy
// (record.WarnBusy): each named by host, version, step, threads and repeat,
// with the other processes' CPU when the Record measured it. Their
// warnings are also under every table, as any warning on every number.
func busyNotes(recs []*record.Record) []string {
	var busy []string
	n := 0
	for _, r := range recs {
		if !slices.ContainsFunc(r.Warnings, func(w record.Warning) bool { return w.Code == record.WarnBusy }) {
			continue
		}
		if n++; n > maxBusyListed {
			continue
		}
		s := fmt.Sprintf("host %s, %s, step %s", r.Host, r.Version, r.Step)
		switch {
		case r.Threads == 1:
			s += ", 1 thread"
		case r.Threads > 1:
			s += fmt.Sprintf(", %d threads", r.Threads)
		}
		s += fmt.Sprintf(", repeat %d", r.Repeat)
		if in := r.Interference; in != nil && in.Seconds > 0 && in.HostCPUs > 0 {
			s += fmt.Sprintf(" (others %.2f CPU, %.0f%% of the host)", in.OtherSeconds/in.Seconds, 100*in.OtherSeconds/(in.Seconds*in.HostCPUs))
		}
		busy = append(busy, s)
	}
	if n == 0 {
		return nil
	}
	more := ""
	if n > maxBusyListed {
		more = fmt.Sprintf("; and %d more", n-maxBusyListed)
	}
	return []string{fmt.Sprintf("busy: other processes used the host's CPU during %d window(s), whose numbers may be off (the tables' notes say who): %s%s",
		n, strings.Join(busy, "; "), more)}
}
