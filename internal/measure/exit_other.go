//go:build !linux

package measure

import "time"

// exitWatch notes when a process exits: on Linux only.
type exitWatch struct{}

func watchExit(int) *exitWatch { return nil }

func (w *exitWatch) exited() (time.Time, bool) { return time.Time{}, false }

func (w *exitWatch) close() {}
