// Package p exports names no other package's code uses, in every way the
// renaming meets.
package p

import (
	"errors"
	"strings"
)

// Table is renamed with its doc comment and its in-package test's use.
const Table = "qps"

// Strings collides with an import.
func Strings() string { return strings.ToUpper(Table) }

// Local collides with a local where it is used.
var Local = 1

func F() int {
	local := 2
	return local + Local
}

// Op's lower form is taken by a function: the test gives it one by hand.
type Op int

func op() Op { return OpAdd }

// OpAdd is spelled in a table of names, which is renamed with it.
const OpAdd Op = 1

var names = map[Op]string{OpAdd: "OpAdd"}

// ErrX and Kind are used by the external tests: aliases keep them working.
var ErrX = errors.New("x")

type Kind int

// Hook is assigned by the external tests: an alias would be a copy.
var Hook = func() {}

// Gen is used by the external tests, and a generic func has no alias.
func Gen[T any](t T) T { return t }

// Used is used by q.
func Used() string { return names[op()] }

// Tested is used by q's tests only.
func Tested() {}

// Error's lower form is predeclared, Type's is a keyword.
type Error struct{}

func Type() {}

// HTTPServer and HTTP: initialisms.
func HTTPServer() {}

var HTTP = 1

// Counts is embedded in Point: the field is renamed with it.
type Counts struct{ N int }

type Point struct {
	Counts
	M int
}

func (pt Point) Total() int { return pt.Counts.N + pt.N + pt.M }
