//go:build !unix

package report

import (
	"os"

	"github.com/perfbench/perfbench/record"
)

// openFile opens a Record file: a regular file of at most
// record.MaxFileBytes (record.OpenInput).
func openFile(path string) (*os.File, error) {
	f, _, err := record.OpenInput(path, record.MaxFileBytes, "Records")
	return f, err
}
