package perfevent

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// eventInfo is one line of perfbench events: an event, its encoding and
// whether it opens on this machine.
type eventInfo struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	PMU  string `json:"pmu"`
	// Type, Config, Config1 and Config2 are the first encoding's; on
	// hybrid CPUs Encodings has one per core PMU.
	Type      uint32     `json:"type"`
	Config    uint64     `json:"config"`
	Config1   uint64     `json:"config1"`
	Config2   uint64     `json:"config2"`
	Encodings []Encoding `json:"encodings,omitempty"`
	// Aliases are other spellings perf accepts for the same event.
	Aliases []string `json:"aliases,omitempty"`
	Unit    string   `json:"unit,omitempty"`
	// Supported is true when every encoding opened (and was closed) on
	// this process; Reason says why not otherwise.
	Supported bool   `json:"supported"`
	Reason    string `json:"reason"`
}

// ListOptions chooses what Events lists.
type ListOptions struct {
	// All adds every alias spelling as a line of its own.
	All bool
	// Tracepoints adds every tracepoint in tracefs. Each is opened and
	// closed; closing a tracepoint counter waits for an RCU grace period
	// (about 30 ms), so thousands take a minute or more.
	Tracepoints bool
	// Progress, when set, is called before each tracepoint is probed.
	Progress func(done, total int)
	// Probe tells whether an event opens; nil means System.Probe.
	Probe func(Event) error
}

// Events lists the catalogue and the PMU aliases found in sysfs (with All,
// alias spellings; with Tracepoints, every tracepoint), each probed on this
// process.
func (s *System) Events(opt ListOptions) ([]eventInfo, error) {
	probe := opt.Probe
	if probe == nil {
		probe = s.Probe
	}
	var out []eventInfo
	add := func(spec string, aliases []string) error {
		l, err := Parse(spec, s)
		if err != nil {
			return fmt.Errorf("list event %s: %w", spec, err)
		}
		for _, e := range l.Events {
			info := eventInfo{Name: e.Name, Kind: e.Kind.String(), Aliases: aliases, Unit: e.Unit}
			enc := e.Encodings[0]
			info.PMU, info.Type, info.Config, info.Config1, info.Config2 = enc.PMU, enc.Type, enc.Config, enc.Config1, enc.Config2
			if len(e.Encodings) > 1 {
				info.Encodings = e.Encodings
				var pmus []string
				for _, x := range e.Encodings {
					pmus = append(pmus, x.PMU)
				}
				info.PMU = strings.Join(pmus, "+")
			}
			if err := probe(e); err != nil {
				info.Reason = reasonOf(err)
			} else {
				info.Supported = true
			}
			out = append(out, info)
		}
		return nil
	}
	for _, c := range catalog() {
		if err := add(c.Name, c.Aliases); err != nil {
			return nil, err
		}
		if opt.All {
			for _, a := range c.Aliases {
				if err := add(a, nil); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, p := range s.PMUs {
		var names []string
		for _, a := range p.Aliases {
			names = append(names, a.Name)
		}
		sort.Strings(names)
		for _, n := range names {
			if err := add(p.Name+"/"+n+"/", nil); err != nil {
				// An alias whose terms need a value (term=?) cannot be
				// opened as it is: list it as such.
				out = append(out, eventInfo{Name: p.Name + "/" + n + "/", Kind: KindPMU.String(), PMU: p.Name, Type: p.Type, Reason: err.Error()})
			}
		}
	}
	if opt.Tracepoints {
		tps, err := s.Tracepoints()
		if err != nil {
			return nil, fmt.Errorf("list tracepoints: %w", err)
		}
		for i, tp := range tps {
			if opt.Progress != nil {
				opt.Progress(i, len(tps))
			}
			if err := add(tp, nil); err != nil {
				out = append(out, eventInfo{Name: tp, Kind: kindTracepoint.String(), PMU: "tracepoint", Type: typeTracepoint, Reason: err.Error()})
			}
		}
	}
	return out, nil
}

// reasonOf is the user-facing reason of a failed probe, without the
// "open X on this process:" prefix.
func reasonOf(err error) string {
	var oe *OpenError
	if errors.As(err, &oe) {
		return oe.Reason
	}
	return err.Error()
}

// WriteEventsText prints events as a table: name, kind, PMU, type, config
// words, and whether the event opens here.
func WriteEventsText(w io.Writer, events []eventInfo) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "EVENT\tKIND\tPMU\tTYPE\tCONFIG\tSUPPORTED")
	for _, e := range events {
		name := e.Name
		if len(e.Aliases) > 0 {
			name += " (" + strings.Join(e.Aliases, ", ") + ")"
		}
		typ := fmt.Sprint(e.Type)
		config := configString(e.Config, e.Config1, e.Config2)
		if len(e.Encodings) > 1 {
			var ts, cs []string
			for _, x := range e.Encodings {
				ts = append(ts, fmt.Sprint(x.Type))
				cs = append(cs, configString(x.Config, x.Config1, x.Config2))
			}
			typ, config = strings.Join(ts, "+"), strings.Join(cs, "+")
		}
		status := "yes"
		if !e.Supported {
			status = "no: " + strings.TrimPrefix(e.Reason, "not supported: ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, e.Kind, e.PMU, typ, config, status)
	}
	return tw.Flush()
}

func configString(c, c1, c2 uint64) string {
	s := fmt.Sprintf("%#x", c)
	if c1 != 0 || c2 != 0 {
		s += fmt.Sprintf(",config1=%#x", c1)
	}
	if c2 != 0 {
		s += fmt.Sprintf(",config2=%#x", c2)
	}
	return s
}
