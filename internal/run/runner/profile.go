package runner

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfbench/perfbench/internal/measure"
	"github.com/perfbench/perfbench/internal/profile/pprofout"
	"github.com/perfbench/perfbench/internal/profile/symbols"
	"github.com/perfbench/perfbench/internal/run/plan"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

// prepareProfiles checks the sampled events of the steps to run, creates
// the profiles' folder and the symbol resolver the windows share, and says
// what will be sampled. Nothing is done when no step samples.
func (r *runner) prepareProfiles(pending []plan.Item) error {
	var rates []string
	seen := map[string]bool{}
	steps := 0
	for _, it := range pending {
		st := it.Step
		if it.Action != plan.ActionMeasure || st.Profile <= 0 {
			continue
		}
		if _, err := r.sampleOptions(st); err != nil {
			return err
		}
		if seen[st.Label] {
			continue
		}
		seen[st.Label] = true
		steps++
		ev := st.ProfileEvent
		if ev == "" {
			ev = perfevent.DefaultSampleEvent().Name
		}
		rate := fmt.Sprintf("%s at %d Hz", ev, st.Profile)
		if !slices.Contains(rates, rate) {
			rates = append(rates, rate)
		}
	}
	if steps == 0 {
		return nil
	}
	if err := mkdirOut(r.profDir); err != nil {
		return fmt.Errorf("create the profiles' folder: %w", err)
	}
	r.resolver = symbols.NewResolver("/")
	fmt.Fprintf(r.opts.Progress, "perfbench run: sampling the server's call stacks in %s (%s per CPU); profiles in %s\n",
		count(steps, "step"), strings.Join(rates, ", "), r.profDir)
	return nil
}

// sampleOptions are a step's sampling options, its event resolved.
func (r *runner) sampleOptions(st *plan.Step) (perfevent.SampleOptions, error) {
	o, err := pprofout.SampleOptions(st.Profile, st.ProfileEvent, r.sys)
	if err != nil {
		return o, fmt.Errorf("profile_event of step %s: %w", st.Label, err)
	}
	return o, nil
}

// profile is how a measurement samples its window: nil when its step does
// not. The profile goes to <out>/profiles/<record>.pb.gz and the Record
// points to it (measure.Profile).
func (r *runner) profile(it plan.Item) (*measure.Profile, error) {
	if it.Step.Profile <= 0 {
		return nil, nil
	}
	o, err := r.sampleOptions(it.Step)
	if err != nil {
		return nil, err
	}
	return &measure.Profile{
		Sample:     o,
		Path:       r.profilePath(it),
		RecordFile: filepath.Join(r.recDir, recordName(it)+".json"),
		Resolver:   r.resolver,
		Version:    it.Version.Label,
		Step:       it.Step.Label,
	}, nil
}

// profilePath is where a measurement's profile goes.
func (r *runner) profilePath(it plan.Item) string {
	return filepath.Join(r.profDir, recordName(it)+".pb.gz")
}

// recordName is the name of a measurement's Record file without ".json":
// its load log and its profile are named after it.
func recordName(it plan.Item) string {
	rec := record.Record{Version: it.Version.Label, Step: it.Step.Label, Threads: it.Threads, Repeat: it.Repeat}
	return strings.TrimSuffix(record.FileName(&rec), ".json")
}
