package runner

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/perfbench/perfbench/internal/load/insertbench"
)

// TestMain lets the test binary be the insert driver perfbench run starts
// (perfbench insert-driver: the runner runs its own executable).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == insertbench.DriverCommand {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := insertbench.DriverMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
