// Package a exports names other packages use in every way, and two no
// other package's code uses.
package a

const Used = 1

var Unused = 2

// T is never named outside a, but b calls a method of a T from New.
type T struct{ F int }

func New() *T { return &T{} }

func (t *T) M() int { return t.F }

// Config is never named outside a, but b reads a field of one.
type Config struct{ Size int }

func Default() Config { return Config{Size: 1} }

type Named struct{}

// OnlyTested is used by b's tests only.
type OnlyTested struct{}

func Generic[X any](x X) X { return x }

func unexported() {}
