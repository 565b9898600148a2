package measure

import (
	"bytes"
	"context"
	"math"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/perfbench/perfbench/internal/testdb"
	"github.com/perfbench/perfbench/mysqld"
	"github.com/perfbench/perfbench/mysqld/sandbox"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

var table = testdb.Table{Tables: 1, Size: 10000}

func needLinux(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("perf events are Linux only")
	}
}

// noHome keeps the tests' credentials away from the user's ~/.my.cnf.
func noHome(t *testing.T) mysqld.ClientEnv {
	return mysqld.ClientEnv{Home: t.TempDir(), Getenv: func(string) string { return "" }}
}

func connect(t *testing.T, srv *sandbox.Server, user, password string) (*mysqld.DB, error) {
	t.Helper()
	tg := mysqld.Target{Socket: srv.Socket, User: user}
	if password != "" {
		tg.Password = mysqld.NewSecret(password)
	}
	c, err := tg.Client(noHome(t))
	if err != nil {
		t.Fatal(err)
	}
	db, err := mysqld.Connect(context.Background(), c, nil, mysqld.ConnectOptions{})
	if err == nil {
		t.Cleanup(func() { db.Close() })
	}
	return db, err
}

func rootDB(t *testing.T, srv *sandbox.Server) *mysqld.DB {
	t.Helper()
	db, err := connect(t, srv, "root", "")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func events(t *testing.T, spec string) (perfevent.List, *perfevent.System) {
	t.Helper()
	sys, err := perfevent.LoadSystem("/")
	if err != nil {
		t.Fatal(err)
	}
	l, err := perfevent.Parse(spec, sys)
	if err != nil {
		t.Fatal(err)
	}
	return l, sys
}

// runLoad starts sysbench and returns a channel closed when it exits, and a
// function returning its output once it has.
func runLoad(t *testing.T, srv *sandbox.Server, args ...string) (<-chan struct{}, func() []byte) {
	t.Helper()
	testdb.PrepareSysbench(t, srv, table)
	cmd := testdb.SysbenchCommand(context.Background(), srv, "oltp_point_select", table, append(args, "run")...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var werr error
	go func() { werr = cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	return done, func() []byte {
		<-done
		if werr != nil {
			t.Fatalf("sysbench: %v\n%s", werr, out.String())
		}
		return out.Bytes()
	}
}

// TestMeasureServerWindow counts a sysbench run from before it starts to after
// it ends: the server's Questions over the window is sysbench's queries, the
// series adds up to the window, and per-op values are value / ops.
func TestMeasureServerWindow(t *testing.T) {
	needLinux(t)
	srv := testdb.Shared(t)
	testdb.PrepareSysbench(t, srv, table)
	db := rootDB(t, srv)
	list, sys := events(t, "task-clock,context-switches,page-faults")
	ctx := context.Background()
	s, err := Start(ctx, Config{Pid: srv.Pid, Events: list, System: sys, DB: db, Interval: 500 * time.Millisecond, Perfbench: "test", Command: []string{"perfbench", "stat"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done, output := runLoad(t, srv, "--threads=2", "--time=2")
	r, err := s.Measure(ctx, WindowSpec{Done: done})
	if err != nil {
		t.Fatal(err)
	}
	queries, err := testdb.ParseQueries(output())
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != record.OutcomeOK || r.Kind != record.KindStat {
		t.Fatalf("outcome %s (%s), kind %s", r.Outcome, r.Error, r.Kind)
	}
	if r.Ops.Source != "Questions" || r.Ops.Per != 1 {
		t.Errorf("ops %+v, want source Questions per 1", r.Ops)
	}
	// Questions counts every statement sysbench sends, as its queries:
	// line does; the window covers the whole run.
	if math.Abs(r.Ops.Count-queries) > 0.01*queries {
		t.Errorf("ops.count %.0f, sysbench queries %.0f: more than 1%% apart", r.Ops.Count, queries)
	}
	if r.Status["Questions"] != r.Ops.Count || r.Gauges["Threads_connected"] < 1 {
		t.Errorf("status Questions %v (ops %v), gauge Threads_connected %v", r.Status["Questions"], r.Ops.Count, r.Gauges["Threads_connected"])
	}
	for _, c := range r.Counters {
		if c.Status != record.StatusCounted {
			t.Errorf("%s: status %s (%s)", c.Event, c.Status, c.Reason)
			continue
		}
		if c.PerOp == nil || *c.PerOp != c.Value/r.Ops.Count {
			t.Errorf("%s: per_op %v, want %v / %v", c.Event, c.PerOp, c.Value, r.Ops.Count)
		}
	}
	// The series adds up to the window: ops exactly (the status deltas
	// telescope, perfbench's own statements taken out of each), counters
	// exactly (deltas of the same reads).
	if len(r.Series) < 2 {
		t.Fatalf("%d series points over %.1f s at 0.5 s", len(r.Series), r.Window.Seconds)
	}
	var ops, tc float64
	for _, p := range r.Series {
		ops += p.Ops
		tc += p.Counters["task-clock"]
	}
	if total, _ := r.Counter("task-clock"); ops != r.Ops.Count || tc != total.Value {
		t.Errorf("series sums: ops %v (window %v), task-clock %v (window %v)", ops, r.Ops.Count, tc, total.Value)
	}
	if last := r.Series[len(r.Series)-1]; math.Abs(last.T-r.Window.Seconds) > 1e-6 {
		t.Errorf("last point at %v s, window %v s", last.T, r.Window.Seconds)
	}
	if r.Server == nil || r.Server.Pid != srv.Pid || r.Server.Version == "" || r.Server.BuildID == "" || r.Server.UptimeEnd <= r.Server.UptimeStart {
		t.Errorf("server %+v", r.Server)
	}
	if r.OS == nil || r.OS.UserSeconds+r.OS.SystemSeconds <= 0 || r.Window.StatusLag <= 0 {
		t.Errorf("os %+v, status lag %v", r.OS, r.Window.StatusLag)
	}
	if r.Provenance.Perfbench != "test" || len(r.Provenance.Command) != 2 || r.Provenance.Kernel == "" || r.Host == "" {
		t.Errorf("provenance %+v host %q", r.Provenance, r.Host)
	}
	if b, err := record.Marshal(r); err != nil {
		t.Error(err)
	} else if _, err := record.Parse(b); err != nil {
		t.Error(err)
	}
}
