// Package cpuset is the CPU lists perfbench places servers and loads on:
// parsing and printing the kernel's list format ("0-3,8"), and, on Linux,
// starting a process pinned, pinning every thread of a running process,
// and reading back where a process may run (Cpus_allowed_list).
package cpuset

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxCPU bounds the CPU numbers a list may name (the kernel's default
// NR_CPUS limit on x86-64 is 8192).
const maxCPU = 8191

// Set is a set of CPU numbers, ascending, each once. The nil Set is empty.
type Set []int

// errSyntax is wrapped by every error of Parse.
var errSyntax = errors.New("not a CPU list")

// Parse reads a CPU list as the kernel prints one and taskset -c takes
// one: numbers and ranges separated by commas ("0", "0-3", "0,2,4-7").
// Spaces around the items are allowed; an empty list is an error.
func Parse(s string) (Set, error) {
	var out Set
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: the list is empty (write CPUs like \"0\", \"0-3\" or \"0,2\")", errSyntax)
	}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		lo, hi, isRange := strings.Cut(item, "-")
		a, err := cpu(lo, item)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = cpu(hi, item); err != nil {
				return nil, err
			}
			if b < a {
				return nil, fmt.Errorf("%w: %q runs backwards (write it %d-%d)", errSyntax, item, b, a)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func cpu(s, item string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("%w: %q is not a CPU number or range (write CPUs like \"0\", \"0-3\" or \"0,2\")", errSyntax, item)
	}
	if n > maxCPU {
		return 0, fmt.Errorf("%w: CPU %d is beyond %d", errSyntax, n, maxCPU)
	}
	return n, nil
}

// String prints the set as the kernel does: "0-3,8"; "" for the empty set.
func (s Set) String() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Equal reports whether two sets hold the same CPUs.
func (s Set) Equal(o Set) bool { return slices.Equal(s, o) }

// Minus returns the CPUs of s that o does not hold.
func (s Set) Minus(o Set) Set {
	var out Set
	for _, c := range s {
		if !slices.Contains(o, c) {
			out = append(out, c)
		}
	}
	return out
}

// Observed is where the kernel says a server and its load may run. A Set
// is nil where it was not read: for a pid of 0, or lists that could not be
// read.
type Observed struct {
	// Server is the CPU list of the server's main thread, and
	// ServerElsewhere how many of its other threads have another list.
	Server          Set
	ServerElsewhere int
	// Load is the load's CPU list.
	Load Set
}

// Observe reads where the kernel says the server (pid server) and the load
// (pid load) may run: the server's main thread's CPU list, how many of its
// other threads have another list, and the load's list.
func Observe(server, load int) Observed {
	var o Observed
	if server > 0 {
		if set, others, err := allowed(server); err == nil {
			o.Server, o.ServerElsewhere = set, others
		}
	}
	if load > 0 {
		if set, _, err := allowed(load); err == nil {
			o.Load = set
		}
	}
	return o
}
