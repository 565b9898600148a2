// Package in is internal: its exported names are the module's own business
// and are not listed, though no other package uses them.
package in

func Unused() int { return 1 }
