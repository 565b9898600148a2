package suite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/mysqld/sandbox"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// options returns sysbench options for a sandbox server over TCP, with its
// load account (the password in an option file).
func options(t *testing.T, srv *sandbox.Server) Options {
	o := Options{Host: "127.0.0.1", Port: srv.Port, User: srv.User, Password: srv.Password, DB: srv.Database}
	path, remove, err := WriteConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	o.ConfigFile = path
	return o
}

// run runs argv and returns its standard output; a failure includes both
// outputs.
func run(ctx context.Context, argv []string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// sysbench looks for stock scripts in the working directory first.
	cmd.Dir = os.TempDir()
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return stdout.String(), fmt.Errorf("%s: %w\nstdout:\n%s\nstderr:\n%s",
				strings.Join(redact(argv), " "), err, stdout.String(), stderr.String())
		}
		return stdout.String(), err
	}
	return stdout.String(), nil
}
