package main

import (
	"strings"
	"testing"
)

// TestHideSecrets: every form of a password option is masked in place and
// kept in the copy; other arguments are untouched.
func TestHideSecrets(t *testing.T) {
	in := []string{"perfbench", "stat", "--password=s3cr3t", "--user", "pb", "--password", "other", "--", "sysbench", "--mysql-password=sb", "-pqq", "run"}
	args := make([]string, len(in))
	for i, a := range in {
		args[i] = strings.Clone(a) // the argument memory is written to: not literals
	}
	kept := hideSecrets(args)
	want := []string{"perfbench", "stat", "--password=******", "--user", "pb", "--password", "*****", "--", "sysbench", "--mysql-password=**", "-p**", "run"}
	for i := range in {
		if kept[i] != in[i] {
			t.Errorf("kept[%d] = %q, want %q", i, kept[i], in[i])
		}
		if args[i] != want[i] {
			t.Errorf("argument %d is %q, want %q", i, args[i], want[i])
		}
	}
}
