// Package runner runs a benchmark plan (package plan) from start to end,
// unattended: perfbench run.
//
//	p, err := plan.Load("examples/plans/smoke.toml")
//	sum, err := runner.Run(ctx, p, runner.Options{Out: "/tmp/smoke", Progress: os.Stderr})
//
// Run walks the plan's expanded items (plan.Expand, less what --resume and
// --only leave out: plan.Pending) in order: it starts and stops managed
// servers, loads the data once per version, runs the post-write flush before
// a read step that follows writes, and measures each step at each thread
// count and repeat. Versions interleave per repeat (A B A B ...).
//
// The steps of one measurement, what a failure or an interruption leaves,
// the output folder's layout, --resume and --only, and how managed servers
// are started and stopped are described in docs/run.md.
package runner
