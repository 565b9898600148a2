// Package a names b.Run, b.Config.Size and b.Config.Rate, which exist,
// and b.Gone, which does not.
package a

import "example.com/m/b"

// Options are a's options.
type Options struct {
	// Rate is per second; Options.Burst bounds it.
	Rate  int
	limit int // below Options.Limit, whose name is limit now
	cfg   b.Config
}

// Catalog returns the names (the func is catalog now).
func catalog() []string { return nil }

// helper calls b.Run; it reads plan.toml, e.g. ~/.my.cnf, runs
// scripts/b.Gone and --b.Gone, talks to MySQL on GitHub, and counts in
// rQPS with ParseLine, a word of another program: prose, all of it.
func helper() { b.Run() }

// Code blocks are examples:
//
//	b.Gone()
//	ParseThing()
func coded() {}

// portable calls a.OnLinux on Linux, and ParseThing (parseThing now) and
// b.NewThing (newThing now).
func portable() {}

// parseThing parses; Options.cfg.Size and Options.cfg.Gone.
func parseThing() {}

var _ = []any{catalog, helper, coded, portable, parseThing, Options{}.limit, Options{}.cfg}
