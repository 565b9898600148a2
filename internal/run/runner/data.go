package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/host/proc"
	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/internal/measure"
	"github.com/perfbench/perfbench/internal/run/plan"
)

// load loads a version's data set from nothing: sysbench cleanup, then
// prepare. Its output goes to <out>/logs/load-<version>.txt.
func (r *runner) load(ctx context.Context, s *server) error {
	err := r.loadData(ctx, s)
	if err != nil && ctx.Err() == nil {
		s.loadErr = err
	}
	return err
}

func (r *runner) loadData(ctx context.Context, s *server) error {
	if err := s.ensure(ctx); err != nil {
		return err
	}
	o, removeOptions, err := withOptionFile(r.plan.SysbenchOptions(plan.Item{Action: plan.ActionLoad, Version: s.v}, s.conn))
	if err != nil {
		return err
	}
	defer removeOptions()
	cleanup, err := suite.CleanupCommand(o)
	if err != nil {
		return err
	}
	prepare, err := suite.PrepareCommand(o)
	if err != nil {
		return err
	}
	if err := s.setMarker(false); err != nil {
		return fmt.Errorf("clear the data marker: %w", err)
	}
	s.dataReady = false
	logPath := filepath.Join(r.logDir, "load-"+s.v.Label+".txt")
	log, err := appendOut(logPath)
	if err != nil {
		return fmt.Errorf("open the load log: %w", err)
	}
	defer log.Close()
	began := time.Now()
	for _, argv := range [][]string{cleanup, prepare} {
		fmt.Fprintf(log, "# %s: %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(measure.ScrubArgs(argv), " "))
		c, err := proc.Start(argv, proc.Options{Log: log})
		if err != nil {
			return err
		}
		select {
		case <-c.Done():
		case <-ctx.Done():
			c.Stop(2 * time.Second)
			return ctx.Err()
		}
		if c.ExitCode() != 0 {
			b, _ := os.ReadFile(logPath)
			tail := tailLines(b, 10)
			return fmt.Errorf("%s ended with %s%s; %s ends:\n%s", strings.Join(measure.ScrubArgs(argv[:2]), " ")+" "+
				argv[len(argv)-1], c.DescribeExit(), loadAccountHint(tail), logPath, indent(tail))
		}
	}
	if err := s.setMarker(true); err != nil {
		return fmt.Errorf("write the data marker: %w", err)
	}
	s.dataReady = true
	r.prog.printf("perfbench run: loaded %s: %s of %d rows in %s", s.v.Label, count(r.plan.Data.Tables, "table"),
		r.plan.Data.TableSize, fmtDuration(time.Since(began)))
	return nil
}

// flush runs the post-write flush before a read step; its warnings (and
// its failure, which does not stop the plan) go to that step's Record.
func (r *runner) flush(ctx context.Context, s *server, it plan.Item) {
	note := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		r.flushNotes[it.Before] = append(r.flushNotes[it.Before], msg)
		r.prog.printf("perfbench run: %s: %s", s.v.Label, msg)
	}
	if err := s.ensure(ctx); err != nil {
		note("post-write flush not run: %v", err)
		return
	}
	db, err := s.rootDB()
	if err != nil {
		note("post-write flush not run: %v", err)
		return
	}
	defer db.Close()
	res, err := suite.Flush(ctx, db, suite.FlushOptions{DB: r.plan.Data.DB, Tables: r.plan.Data.Tables, Timeout: r.plan.FlushTimeout})
	for _, w := range res.Warnings {
		note("post-write flush: %s", w)
	}
	if err != nil {
		if ctx.Err() == nil {
			note("post-write flush failed: %v", err)
		}
		return
	}
	r.prog.printf("perfbench run: %s: post-write flush done in %s", s.v.Label, fmtDuration(res.Waited))
}
