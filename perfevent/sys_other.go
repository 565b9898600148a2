//go:build !linux

package perfevent

import "errors"

// openAttr stands for perf_event_attr where there is no perf_event_open.
type openAttr struct{}

func engineAttr(e Event, enc Encoding, inherit bool) openAttr { return openAttr{} }
func attrFor(base openAttr, grouped, inherit bool) openAttr   { return base }
func attrDisabled(a openAttr) openAttr                        { return a }
func attrGrouped(a openAttr) bool                             { return false }

var errNotLinux = errors.New("perf events exist on Linux only")

// realSys fails every call: perf events are a Linux interface.
type realSys struct{}

func (realSys) perfOpen(*openAttr, int, int, int, int) (int, error) { return -1, errNotLinux }
func (realSys) read(int, []byte) (int, error)                       { return 0, errNotLinux }
func (realSys) eventID(int) (uint64, error)                         { return 0, errNotLinux }
func (realSys) close(int) error                                     { return errNotLinux }
func (realSys) closeAll([]int) error                                { return errNotLinux }
func (realSys) pinned(_ int, work func())                           { work() }
func (realSys) openHere([]openAttr) ([]int, bool)                   { return nil, false }
func (realSys) nofile() (uint64, uint64, error)                     { return 0, 0, errNotLinux }
func (realSys) setNofile(uint64) error                              { return errNotLinux }
func (realSys) openFiles() int                                      { return 0 }
func (realSys) bootNanos() int64                                    { return 0 }

func explainOpen(s *System, e Event, enc Encoding, err error) string { return "" }
