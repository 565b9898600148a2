//go:build !unix

package report

import "os"

func openFile(path string) (*os.File, error) { return os.Open(path) }
