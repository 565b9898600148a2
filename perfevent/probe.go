package perfevent

import (
	"fmt"
	"os"
)

// OpenError is a failed perf_event_open, explained: which event, on what,
// why, and how to fix it. It wraps one of the sentinels (ErrNotSupported,
// ErrPermission, or none for other failures) and the errno.
type OpenError struct {
	// Event is the event's name as perf prints it.
	Event string
	// PMU is the PMU of the encoding that failed.
	PMU string
	// Target says what the event was opened on: "this process", "pid 4121",
	// "tid 4187 of pid 4121".
	Target string
	// Reason is the explanation in words the user can act on, errno
	// included: "this machine has no hardware PMU (ENOENT) ...".
	Reason string
	// Err is the errno.
	Err error
	// Kind is the sentinel (ErrNotSupported, ErrPermission) or nil.
	Kind error
}

func (e *OpenError) Error() string {
	return fmt.Sprintf("open %s on %s: %s", e.Event, e.Target, e.Reason)
}

// Unwrap lets errors.Is find both the sentinel and the errno.
func (e *OpenError) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}

// euid is os.Geteuid; tests replace it.
var euid = os.Geteuid

// refusedFix is the advice on a perf_event_open refused for want of
// privilege. Root is not told to run as root: a root that is refused lacks
// the capabilities in its container or user namespace, or a security
// module refuses it.
func refusedFix() string {
	if euid() == 0 {
		return "refused even to root: grant CAP_PERFMON to its container or user namespace, or check lockdown and the security module"
	}
	return "run as root or grant CAP_PERFMON"
}
