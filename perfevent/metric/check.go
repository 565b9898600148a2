package metric

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// eventStatus says whether one event of a set opens on this machine.
type eventStatus struct {
	Name     string `json:"name"`
	Spelling string `json:"spelling"`
	Opens    bool   `json:"opens"`
	Reason   string `json:"reason"`
}

// metricStatus says whether a metric can be computed on this machine: all
// the events it reads (directly or through other metrics) open.
type metricStatus struct {
	Name       string   `json:"name"`
	Level      string   `json:"level"`
	Group      string   `json:"group"`
	Expr       string   `json:"expr"`
	Events     []string `json:"events"`
	Literals   []string `json:"literals,omitempty"`
	Computable bool     `json:"computable"`
	// Missing are the events that do not open.
	Missing []string `json:"missing,omitempty"`
}

// Report is a set checked on this machine.
type Report struct {
	CPUID   string         `json:"cpuid"`
	Set     string         `json:"set"`
	Source  string         `json:"source"`
	Note    string         `json:"note,omitempty"`
	HasPMU  bool           `json:"hardware_pmu"`
	Metrics []metricStatus `json:"metrics"`
	Events  []eventStatus  `json:"events"`
}

// Check says which events of s open on this machine and which metrics can
// then be computed: openReason says why the events of a spelling
// (perfevent.Parse syntax) do not open here, "" when they all do; hasPMU
// says whether the machine has a hardware PMU. The caller probes with
// perfevent: the metric definitions know no perfevent types.
func Check(s *Set, cpuid string, hasPMU bool, openReason func(spelling string) string) Report {
	r := Report{CPUID: cpuid, Set: s.Name, Source: s.Source.String(), Note: s.Note, HasPMU: hasPMU}
	opens := map[string]bool{}
	for _, e := range s.Events {
		st := eventStatus{Name: e.Name, Spelling: e.Spelling}
		switch {
		case e.Spelling == "":
			st.Reason = e.Why
		default:
			st.Reason = openReason(e.Spelling)
		}
		st.Opens = st.Reason == ""
		opens[e.Name] = st.Opens
		r.Events = append(r.Events, st)
	}
	for _, m := range s.Metrics {
		ms := metricStatus{Name: m.Name, Level: m.Level.String(), Group: m.Group, Expr: m.Expr.String(),
			Events: s.Needs(m.Name), Literals: s.Literals(m.Name)}
		for _, n := range ms.Events {
			if !opens[n] {
				ms.Missing = append(ms.Missing, n)
			}
		}
		ms.Computable = len(ms.Missing) == 0
		r.Metrics = append(r.Metrics, ms)
	}
	return r
}

// WriteText prints a report: the set and its source, one line per metric
// (level, whether it can be computed here, the events it reads), then one
// line per event (perfbench's spelling, whether it opens here and why not).
func (r Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "cpu %s: metric set %s, from %s\n", r.CPUID, r.Set, r.Source)
	if r.Note != "" {
		fmt.Fprintf(w, "note: %s\n", r.Note)
	}
	n := 0
	for _, m := range r.Metrics {
		if m.Computable {
			n++
		}
	}
	switch {
	case !r.HasPMU:
		fmt.Fprintf(w, "this machine has no hardware PMU: %d of %d metrics can be computed here\n", n, len(r.Metrics))
	default:
		fmt.Fprintf(w, "%d of %d metrics can be computed here\n", n, len(r.Metrics))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "METRIC\tLEVEL\tHERE\tEVENTS")
	for _, m := range r.Metrics {
		here := "yes"
		if !m.Computable {
			here = fmt.Sprintf("no (%d of %d events do not open)", len(m.Missing), len(m.Events))
		}
		evs := strings.Join(m.Events, " ")
		if len(m.Literals) > 0 {
			evs += " #" + strings.Join(m.Literals, " #")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Level, here, evs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "EVENT\tENCODING\tOPENS")
	for _, e := range r.Events {
		opens := "yes"
		if !e.Opens {
			opens = "no: " + strings.TrimPrefix(e.Reason, "not supported: ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Name, e.Spelling, opens)
	}
	return tw.Flush()
}
