package record

// Placement is where the server and the load ran: the CPU affinity
// perfbench set, and what the kernel said each may run on while the
// window was measured. CPU lists are in the kernel's format ("0-3,8").
type Placement struct {
	// Mode is the plan's placement: "split", "shared", "cpus" (the plan's
	// server_cpus and client_cpus) or "none".
	Mode string `json:"mode"`
	// Server and Client are the CPUs perfbench pinned the server and the
	// load to; empty when it pinned nothing.
	Server string `json:"server_cpus,omitempty"`
	Client string `json:"client_cpus,omitempty"`
	// ServerAllowed and ClientAllowed are the Cpus_allowed_list of the
	// server's and the load's main process, read after the load started.
	ServerAllowed string `json:"server_allowed,omitempty"`
	ClientAllowed string `json:"client_allowed,omitempty"`
	// ServerThreadsElsewhere counts the server's threads whose list
	// differs from its main thread's.
	ServerThreadsElsewhere int `json:"server_threads_elsewhere,omitempty"`
}
