package pprofout

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/perfbench/perfbench/internal/profile/symbols"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
	"github.com/spf13/pflag"
)

// defaultFileName is the profile file of a Record, next to it.
const defaultFileName = "profile.pb.gz"

// Window samples one measured window and writes its profile.
type Window struct {
	s *perfevent.Sampling
}

// Start starts sampling process pid for a window (perfevent.StartSampling).
func Start(pid int, opts perfevent.SampleOptions) (*Window, error) {
	s, err := perfevent.StartSampling(pid, opts)
	if err != nil {
		return nil, err
	}
	return &Window{s: s}, nil
}

// Begin and End bound the samples kept to the counters' window: call them
// right before the counters' first and last reads (perfevent.Sampling.Begin).
func (w *Window) Begin() { w.s.Begin() }

// End closes the window Begin opened.
func (w *Window) End() { w.s.End() }

// Result is a written profile.
type Result struct {
	// Path is the file written; Stats and Warnings are the Profile's.
	Path     string
	Stats    Stats
	Warnings []string
	// Samples is the number of samples kept.
	Samples int
	// Comms counts the samples by thread name (label comm), most samples
	// first: what tells threads apart when no roles were given.
	Comms []CommSamples
}

// CommSamples is the number of samples of the threads of one name.
type CommSamples struct {
	Comm    string // "" for threads whose name was not read
	Samples int
}

// commSamples counts set's samples by thread name.
func commSamples(set *perfevent.SampleSet) []CommSamples {
	by := map[string]int{}
	for _, s := range set.Samples {
		by[set.Comms[s.Tid]] += s.N()
	}
	out := make([]CommSamples, 0, len(by))
	for c, n := range by {
		out = append(out, CommSamples{Comm: c, Samples: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Samples != out[j].Samples {
			return out[i].Samples > out[j].Samples
		}
		return out[i].Comm < out[j].Comm
	})
	return out
}

// Finish stops sampling, builds the profile with opts and writes it to path
// atomically. A process that exited, lost records or missing symbols are
// warnings on the result, not errors.
func (w *Window) Finish(path string, opts Options) (*Result, error) {
	set, err := w.s.Stop()
	if err != nil {
		return nil, fmt.Errorf("stop sampling: %w", err)
	}
	p, err := build(set, opts)
	if err != nil {
		return nil, err
	}
	if err := p.WriteFile(path); err != nil {
		return nil, err
	}
	return &Result{Path: path, Stats: p.Stats, Warnings: p.Warnings, Samples: set.Count(), Comms: commSamples(set)}, nil
}

// recordOptions are the Options of the profile of Record r's window: its op
// count and source, version and step, with the server's thread roles and a
// shared resolver (nil for a new one).
func recordOptions(r *record.Record, roles map[int]string, res *symbols.Resolver) Options {
	return Options{Roles: roles, Ops: r.Ops.Count, OpsSource: r.Ops.Source, Version: r.Version, Step: r.Step, Resolver: res}
}

// Cancel stops sampling and discards the samples (a failed window).
func (w *Window) Cancel() {
	_, _ = w.s.Stop()
}

// WriteFile writes the profile to path atomically (a synced temporary file
// renamed over path).
func (p *builtProfile) WriteFile(path string) error {
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return fmt.Errorf("write profile %s: %w", path, err)
	}
	return record.WriteFileAtomic(path, b.Bytes())
}

// RelPath is the path of profile relative to the folder of the Record file
// recordFile, for Record.Profile.
func RelPath(recordFile, profile string) (string, error) {
	rel, err := filepath.Rel(filepath.Dir(recordFile), profile)
	if err != nil {
		return "", fmt.Errorf("profile %s relative to record %s: %w", profile, recordFile, err)
	}
	return filepath.ToSlash(rel), nil
}

// Meta is what perfbench keeps in a profile's comments.
type Meta struct {
	Event     string
	Ops       float64 // 0 when unknown
	OpsSource string
	Version   string
	Step      string
	Warnings  []string
}

// ReadMeta reads the perfbench comments of p.
func ReadMeta(p *profile.Profile) Meta {
	var m Meta
	for _, c := range p.Comments {
		switch {
		case strings.HasPrefix(c, commentOps):
			if v, err := strconv.ParseFloat(c[len(commentOps):], 64); err == nil && v > 0 {
				m.Ops = v
			}
		case strings.HasPrefix(c, commentOpsSource):
			m.OpsSource = c[len(commentOpsSource):]
		case strings.HasPrefix(c, commentVersion):
			m.Version = c[len(commentVersion):]
		case strings.HasPrefix(c, commentStep):
			m.Step = c[len(commentStep):]
		case strings.HasPrefix(c, commentEvent):
			m.Event = c[len(commentEvent):]
		case strings.HasPrefix(c, commentWarning):
			m.Warnings = append(m.Warnings, c[len(commentWarning):])
		}
	}
	return m
}

// Flags are the profile flags of perfbench stat and run:
// --profile[=FREQ], --profile-event and --profile-out.
type Flags struct {
	// Freq is 0 when --profile was not given.
	Freq  int
	Event string
	Out   string
}

// AddFlags registers the flags on fs. --profile alone samples at
// perfevent.DefaultSampleFreq.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&f.Freq, "profile", 0, fmt.Sprintf("also sample call stacks at FREQ Hz per CPU and write a pprof profile "+
		"(--profile alone: %d Hz)", perfevent.DefaultSampleFreq))
	fs.Lookup("profile").NoOptDefVal = strconv.Itoa(perfevent.DefaultSampleFreq)
	fs.StringVar(&f.Event, "profile-event", "", "event to sample with --profile (default cpu-clock; cycles where the CPU has a PMU)")
	fs.StringVar(&f.Out, "profile-out", "", "profile file to write with --profile (default "+defaultFileName+" next to the Record, or in the current folder)")
}

// Enabled reports whether --profile was given.
func (f *Flags) Enabled() bool { return f.Freq > 0 }

// Validate checks the flags' values (a usage error when it fails).
func (f *Flags) Validate() error {
	if f.Freq < 0 {
		return fmt.Errorf("--profile frequency must be positive, not %d", f.Freq)
	}
	if !f.Enabled() && (f.Event != "" || f.Out != "") {
		return fmt.Errorf("--profile-event and --profile-out need --profile")
	}
	return nil
}

// SampleOptions turns the flags into sampling options, resolving the event
// with the catalogue sys (nil is allowed when no event was named).
func (f *Flags) SampleOptions(sys *perfevent.System) (perfevent.SampleOptions, error) {
	o, err := SampleOptions(f.Freq, f.Event, sys)
	if err != nil {
		return o, fmt.Errorf("--profile-event: %w", err)
	}
	return o, nil
}

// SampleOptions are the sampling options of freq samples per second per CPU
// of event, resolved with the catalogue sys (nil is allowed when event is
// empty: perfevent.DefaultSampleEvent).
func SampleOptions(freq int, event string, sys *perfevent.System) (perfevent.SampleOptions, error) {
	o := perfevent.SampleOptions{Freq: freq, System: sys}
	if event == "" {
		return o, nil
	}
	if sys == nil {
		return o, fmt.Errorf("%s: no event catalogue to resolve it", event)
	}
	l, err := perfevent.Parse(event, sys)
	if err != nil {
		return o, err
	}
	if len(l.Events) != 1 {
		return o, fmt.Errorf("%s names %d events: sample one", event, len(l.Events))
	}
	o.Event = l.Events[0]
	return o, nil
}

// Path is the profile file for a Record written to recordFile ("" when the
// Record is not written to a file): --profile-out when given, else
// defaultFileName next to the Record, else in the current folder.
func (f *Flags) Path(recordFile string) string {
	switch {
	case f.Out != "":
		return f.Out
	case recordFile != "":
		return filepath.Join(filepath.Dir(recordFile), defaultFileName)
	}
	return defaultFileName
}
