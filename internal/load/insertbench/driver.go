package insertbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/perfbench/perfbench/internal/host/cpuset"
	"github.com/perfbench/perfbench/internal/host/proc"
)

// DriverCommand is perfbench's hidden subcommand that runs one step's
// driver as a process of its own (DriverMain): perfbench run starts it
// with StartDriver, so that the driver's CPU time is the driver's alone
// (not perfbench's measuring), and the driver runs where a load client
// runs (the plan's client CPUs), as sysbench does.
const DriverCommand = "insert-driver"

// The driver's lines on its standard output that StartDriver acts on;
// anything else it prints goes to the log only.
const (
	readyLine = "insert-driver: ready" // connected and prepared; waiting for the signal to start
	endLine   = "insert-driver: end"   // the last operation ended
)

// driverRequest is what a driver runs: the file StartDriver writes (mode
// 0600: the DSN holds the password) and DriverMain reads.
type driverRequest struct {
	DSN     string  `json:"dsn"`
	Options Options `json:"options"`
}

// driverResponse is what a driver measured, the file DriverMain writes
// before it exits.
type driverResponse struct {
	Result *wireResult `json:"result,omitempty"`
	Error  string      `json:"error,omitempty"`
}

// wireResult is a Result in JSON: P50 and P99 are NaN without a full
// second, which JSON cannot hold; they are left out then.
type wireResult struct {
	*Result
	P50 *float64 `json:"P50,omitempty"`
	P99 *float64 `json:"P99,omitempty"`
}

func toWire(r *Result) *wireResult {
	if r == nil {
		return nil
	}
	w := &wireResult{Result: r}
	if !math.IsNaN(r.P50) {
		w.P50, w.P99 = &r.P50, &r.P99
	}
	return w
}

func (w *wireResult) result() *Result {
	if w == nil || w.Result == nil {
		return nil
	}
	r := w.Result
	r.P50, r.P99 = math.NaN(), math.NaN()
	if w.P50 != nil && w.P99 != nil {
		r.P50, r.P99 = *w.P50, *w.P99
	}
	return r
}

// DriverMain is the driver's process (perfbench insert-driver REQUEST
// RESPONSE): it runs the step of the request file and writes what it
// measured to the response file; its exit code is 0 when it could write
// that file (the step's own error is in it). Before its load it prints
// readyLine and waits for startSignal; after its last operation it prints
// endLine. ctx ending (SIGTERM, SIGINT) interrupts the step, which then
// reports what it did.
func DriverMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintf(stderr, "perfbench %s: want the request and the response file, got %q\n", DriverCommand, args)
		return 2
	}
	resp := driverResponse{}
	res, err := serveDriver(ctx, args[0], stdout)
	resp.Result = toWire(res)
	if err != nil {
		resp.Error = err.Error()
	}
	b, err := json.Marshal(resp)
	if err == nil {
		err = os.WriteFile(args[1], b, 0o600)
	}
	if err != nil {
		fmt.Fprintf(stderr, "perfbench %s: write the response: %v\n", DriverCommand, err)
		return 1
	}
	return 0
}

func serveDriver(ctx context.Context, reqPath string, stdout io.Writer) (*Result, error) {
	b, err := os.ReadFile(reqPath)
	if err != nil {
		return nil, fmt.Errorf("insert driver: read the request: %w", err)
	}
	var req driverRequest
	if err := json.Unmarshal(b, &req); err != nil {
		return nil, fmt.Errorf("insert driver: read the request %s: %w", reqPath, err)
	}
	cfg, err := mysql.ParseDSN(req.DSN)
	if err != nil {
		return nil, fmt.Errorf("insert driver: read the request's DSN: %w", err)
	}
	start := make(chan os.Signal, 1)
	signal.Notify(start, startSignal)
	defer signal.Stop(start)
	o := req.Options
	o.AtStart = func(time.Time) {
		fmt.Fprintln(stdout, readyLine)
		select {
		case <-start:
		case <-ctx.Done():
		}
	}
	o.AtEnd = func(time.Time) { fmt.Fprintln(stdout, endLine) }
	return runStep(ctx, cfg, o)
}

// Driver is a step's driver running as a process of its own.
type Driver struct {
	cmd   *proc.Cmd
	dir   string // the request and response files
	ready chan struct{}
	ended chan struct{}
}

// StartDriver starts argv (perfbench's own executable and DriverCommand)
// to run step o against cfg, pinned to cpus when not empty, everything it
// prints going to log. The caller waits for Ready, calls Start, waits for
// Ended (the load's end) and then Wait; Stop interrupts it.
func StartDriver(argv []string, cfg *mysql.Config, o Options, cpus cpuset.Set, log io.Writer) (*Driver, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "perfbench-insert-*")
	if err != nil {
		return nil, fmt.Errorf("insert-benchmark step %s: start the driver: %w", o.Step.Name, err)
	}
	b, err := json.Marshal(driverRequest{DSN: cfg.FormatDSN(), Options: o})
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "request.json"), b, 0o600)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("insert-benchmark step %s: write the driver's request: %w", o.Step.Name, err)
	}
	d := &Driver{dir: dir, ready: make(chan struct{}), ended: make(chan struct{})}
	var sawReady, sawEnd bool
	onLine := func(l string) {
		switch strings.TrimSpace(l) {
		case readyLine:
			if !sawReady {
				sawReady = true
				close(d.ready)
			}
		case endLine:
			if !sawEnd {
				sawEnd = true
				close(d.ended)
			}
		}
	}
	args := append(append([]string(nil), argv...), filepath.Join(dir, "request.json"), filepath.Join(dir, "response.json"))
	d.cmd, err = proc.Start(args, proc.Options{Log: log, OnLine: onLine, CPUs: cpus})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("insert-benchmark step %s: start the driver: %w", o.Step.Name, err)
	}
	return d, nil
}

// Pid is the driver's process id.
func (d *Driver) Pid() int { return d.cmd.Pid() }

// Ready is closed when the driver has connected and prepared, and waits
// for Start.
func (d *Driver) Ready() <-chan struct{} { return d.ready }

// Ended is closed when the driver's last operation has ended.
func (d *Driver) Ended() <-chan struct{} { return d.ended }

// Exited is closed when the driver's process has exited.
func (d *Driver) Exited() <-chan struct{} { return d.cmd.Exited() }

// Start starts a ready driver's load.
func (d *Driver) Start() error {
	if err := proc.Signal(d.cmd.Pid(), startSignal); err != nil {
		return fmt.Errorf("start the insert driver's load: %w", err)
	}
	return nil
}

// Stop interrupts the driver: it stops its load and reports what it did
// (killed if it has not exited within grace).
func (d *Driver) Stop(grace time.Duration) { d.cmd.Stop(grace) }

// Wait waits for the driver to exit and returns what it measured and the
// step's error, as runStep does; a driver that exited without saying is an
// error naming how it ended.
func (d *Driver) Wait() (*Result, error) {
	defer os.RemoveAll(d.dir)
	d.cmd.Wait(0)
	b, err := os.ReadFile(filepath.Join(d.dir, "response.json"))
	if err != nil {
		return nil, fmt.Errorf("the insert driver (pid %d) ended with %s without a result", d.cmd.Pid(), d.cmd.DescribeExit())
	}
	var resp driverResponse
	if err := json.Unmarshal(b, &resp); err != nil {
		return nil, fmt.Errorf("read the insert driver's result: %w", err)
	}
	res := resp.Result.result()
	if resp.Error != "" {
		return res, errors.New(resp.Error)
	}
	return res, nil
}
