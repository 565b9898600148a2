//go:build tools

// Package deps pins modules that packages under construction will import.
package deps

import (
	_ "github.com/BurntSushi/toml"
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/google/pprof/profile"
	_ "github.com/ianlancetaylor/demangle"
	_ "github.com/spf13/pflag"
	_ "golang.org/x/image/font/basicfont"
	_ "golang.org/x/perf/benchfmt"
	_ "golang.org/x/perf/benchmath"
	_ "golang.org/x/sys/unix"
	_ "golang.org/x/term"
)
