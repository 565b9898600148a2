package profdiff

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/perfbench/perfbench/internal/profile/pprofout"
	"github.com/perfbench/perfbench/record"
)

// Load reads the inputs named by paths: Record files (*.json) with a
// profile (Record.Profile, relative to the Record's file), folders walked for
// such Records, and profile files (anything else, read as pprof; version and
// step from the comments pprofout writes, else the file's folder and
// "profile"). Records without a profile, failed Records and JSON files that
// are not Records, inside folders, are skipped and counted in notes.
func Load(paths []string) (in []input, notes []string, err error) {
	var noProfile, failed int
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, notes, err
		}
		if !fi.IsDir() && !strings.HasSuffix(p, ".json") {
			x, err := readProfileFile(p)
			if err != nil {
				return nil, notes, err
			}
			in = append(in, x)
			continue
		}
		recs, problems, err := record.Load([]string{p}, false)
		if err != nil {
			return nil, notes, err
		}
		for _, pr := range problems {
			notes = append(notes, fmt.Sprintf("skipped: %v", pr))
		}
		for _, l := range recs {
			r := l.Record
			if r.Profile == "" {
				if !fi.IsDir() {
					return nil, notes, fmt.Errorf("%s: the Record has no profile (sample its window: perfbench stat --profile, or profile = 99 in a plan)", l.Path)
				}
				noProfile++
				continue
			}
			if r.Outcome == record.OutcomeFailed {
				failed++
				continue
			}
			pp := r.Profile
			if !filepath.IsAbs(pp) {
				pp = filepath.Join(filepath.Dir(l.Path), filepath.FromSlash(pp))
			}
			pr, err := readProfile(pp)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					notes = append(notes, fmt.Sprintf("skipped %s: its profile %s is missing", l.Path, pp))
					continue
				}
				return nil, notes, fmt.Errorf("%s: %w", l.Path, err)
			}
			x := input{Version: r.Version, Step: r.Step, Ops: r.Ops.Count, OpsSource: r.Ops.Source, Profile: pr, Path: pp, Warnings: r.WarningTexts()}
			if x.Ops <= 0 {
				x.Ops = pprofout.ReadMeta(pr).Ops
			}
			in = append(in, x)
		}
	}
	if noProfile > 0 {
		notes = append(notes, fmt.Sprintf("skipped %d Records without a profile", noProfile))
	}
	if failed > 0 {
		notes = append(notes, fmt.Sprintf("skipped %d failed Records", failed))
	}
	if len(in) == 0 {
		return nil, notes, fmt.Errorf("%w in %s (Records need Record.Profile: sample their windows with perfbench stat "+
			"--profile, or profile = 99 in a plan)", ErrNoProfiles, strings.Join(paths, ", "))
	}
	return in, notes, nil
}

func readProfile(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("read profile %s: %w", path, err)
	}
	return p, nil
}

// readProfileFile reads a profile given on its own.
func readProfileFile(path string) (input, error) {
	p, err := readProfile(path)
	if err != nil {
		return input{}, err
	}
	m := pprofout.ReadMeta(p)
	x := input{Version: m.Version, Step: m.Step, Ops: m.Ops, OpsSource: m.OpsSource, Profile: p, Path: path, Warnings: m.Warnings}
	if x.Version == "" {
		x.Version = filepath.Base(filepath.Dir(path))
		if x.Version == "." || x.Version == "/" {
			x.Version = strings.TrimSuffix(filepath.Base(path), ".pb.gz")
		}
	}
	if x.Step == "" {
		x.Step = "profile"
	}
	return x, nil
}
