package plan

import "github.com/perfbench/perfbench/internal/tomlpos"

// lineIndex maps keys of a plan to the lines they are on, so that
// validation errors (which the TOML decoder knows nothing about) can name a
// line; paths as package tomlpos spells them: "run.threads",
// "version[1].basedir", "steps.list=point-query".
type lineIndex tomlpos.Lines

// indexLines builds the line index of src, a plan the decoder accepted.
func indexLines(src string) lineIndex { return lineIndex(tomlpos.Index(src)) }

// line returns the line of path, else of its closest parent, else 0.
func (ix lineIndex) line(path string) int { return tomlpos.Lines(ix).Line(path) }

// path returns the index's path of a key the decoder gives (see
// tomlpos.Lines.Path).
func (ix lineIndex) path(k []string) string { return tomlpos.Lines(ix).Path(k) }
