// Package b has what a's comments name.
package b

// Run runs.
func Run() {}

// Config is b's options.
type Config struct {
	Rate int
	size int
}

// Size is c's size.
func (c Config) Size() int { return c.size }

// newThing was NewThing.
func newThing() {}

var _ = newThing
