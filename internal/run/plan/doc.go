// Package plan reads benchmark plans: which server versions to compare,
// which steps to run at which thread counts, how many times, and what to
// measure. A plan is a TOML file (comments are welcome: say why each choice
// was made); examples/plans/ has commented examples to start from.
//
// Parse checks the whole file and reports every problem with its line.
// Expand turns a plan into the ordered list of things the runner does:
// start servers, load data, flush after writes, measure, stop. Every
// measurement has an ID made of its version, step, thread count and repeat
// (measurementID), the same for a Record (RecordID), so a resumed run skips
// what is done and --only runs a part (Pending).
//
// The format, key by key with its default and its bound ([run], [data],
// [steps] with overrides and custom steps, [[version]], [[host]]), how the
// versions of a step are compared (duet, slices, windows), placement,
// profiles and the order of a run are in docs/plan.md.
package plan
