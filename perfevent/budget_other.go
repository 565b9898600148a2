//go:build !linux

package perfevent

func cpuidCounters(vendor, cpus string) (Counters, bool) { return Counters{}, false }
