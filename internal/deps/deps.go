//go:build tools

// Package deps pins modules that packages under construction will import.
package deps
import (
 _ "golang.org/x/sys/unix"
 _ "github.com/spf13/pflag"
 _ "github.com/go-sql-driver/mysql"
 _ "github.com/google/pprof/profile"
 _ "golang.org/x/perf/benchmath"
 _ "golang.org/x/perf/benchfmt"
 _ "github.com/BurntSushi/toml"
 _ "golang.org/x/image/font/basicfont"
 _ "github.com/ianlancetaylor/demangle"
 _ "golang.org/x/term"
)
