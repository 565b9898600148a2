package record

// Interference is the CPU that processes other than the server, the load
// client and perfbench used on the host over the window, measured from
// /proc/stat and every process's /proc/PID/stat at the window's two edges.
type Interference struct {
	// OtherSeconds is the host's user, nice and system CPU time over the
	// window minus that of the server, the load client and perfbench
	// (never below 0), in CPU-seconds.
	OtherSeconds float64 `json:"other_seconds"`
	// Seconds is the time between the two readings; HostCPUs is the
	// host's CPUs over it (all CPU time /proc/stat counted, steal and
	// idle included, per second).
	Seconds  float64 `json:"seconds"`
	HostCPUs float64 `json:"host_cpus"`
	// StealSeconds is CPU time the hypervisor gave to other guests.
	StealSeconds float64 `json:"steal_seconds,omitempty"`
	// ClientKnown is false when no process started by perfbench (other
	// than the server) ran at either edge: a load client, if one ran on
	// this host, is then in OtherSeconds.
	ClientKnown bool `json:"client_known"`
	// Top are the other processes that used the most CPU over the window,
	// most first (processes that exited inside it are in OtherSeconds
	// only).
	Top []OtherProcess `json:"top,omitempty"`
}

// OtherProcess is one process's CPU over the window.
type OtherProcess struct {
	Pid     int     `json:"pid"`
	Comm    string  `json:"comm"`
	Seconds float64 `json:"seconds"`
}
