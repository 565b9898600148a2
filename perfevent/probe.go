package perfevent

import "fmt"

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
