package main

import (
	"strings"
	"unsafe"

	"github.com/perfbench/perfbench/internal/measure"
)

// hideSecrets returns a copy of args (perfbench's command line as the
// kernel gave it) and then overwrites, in the process's own argument
// memory, the values of password options (--password=x, --password x, and
// in a load command --mysql-password=x, -px: as measure.ScrubArgs finds
// them) with asterisks, so that ps and /proc/PID/cmdline stop showing them
// from the moment perfbench starts. The copy keeps the values for use.
//
// Go's os.Args strings point into that memory (the runtime does not copy
// them), as setproctitle relies on in C.
func hideSecrets(args []string) []string {
	kept := make([]string, len(args))
	for i, a := range args {
		kept[i] = strings.Clone(a)
	}
	masked := measure.ScrubArgs(kept)
	for i, a := range args {
		if masked[i] == kept[i] || len(a) == 0 {
			continue
		}
		// The secret is what follows "=" (--password=x), what follows -p
		// (-px), or the whole argument (the value after --password).
		from := 0
		switch {
		case strings.HasSuffix(masked[i], "=***"):
			from = strings.IndexByte(a, '=') + 1
		case masked[i] == "-p***":
			from = 2
		}
		b := unsafe.Slice(unsafe.StringData(a), len(a))
		for j := from; j < len(b); j++ {
			b[j] = '*'
		}
	}
	return kept
}
