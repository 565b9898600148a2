//go:build !linux

package procfs

import (
	"errors"
	"os"
)

// errESRCH never matches outside Linux.
var errESRCH = errors.New("no such process")

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }

func readDirNames(path string) ([]string, error) {
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names, nil
}

func readlink(path string) (string, error) { return os.Readlink(path) }

// ClockTicks returns 100, Linux's USER_HZ on every common architecture.
func ClockTicks() int { return 100 }
