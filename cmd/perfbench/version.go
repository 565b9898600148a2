package main

import "runtime/debug"

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

// versionString is perfbench's version: the build-time value, else the module
// version or VCS revision recorded by the Go toolchain, else "devel".
func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "devel-" + s.Value[:12]
			}
		}
	}
	return "devel"
}
