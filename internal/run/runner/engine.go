package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/load/suite"
	"github.com/perfbench/perfbench/record"
)

// checkEngine returns an error, with the fix, when the version asks for a
// storage engine (engine in the plan) that its server lacks: a running
// server without the MyRocks plugin, a start command that did not load it.
func (s *server) checkEngine(ctx context.Context) error {
	if s.v.Engine == "" {
		return nil
	}
	db, err := s.rootDB()
	if err != nil {
		return fmt.Errorf("check the engine of %s: %w", s.v.Label, err)
	}
	defer db.Close()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := suite.CheckEngine(cctx, db, s.v.Engine); err != nil {
		return fmt.Errorf("version %s (line %d of the plan) has engine = %q: %w", s.v.Label, s.v.Line, s.v.Engine, err)
	}
	return nil
}

// recordEngine sets the storage engine of the step's tables, read from
// information_schema after the window, on a Record of a suite step; a
// read that fails leaves it empty with a warning when the plan asked for
// an engine.
func (r *runner) recordEngine(ctx context.Context, rec *record.Record, s *server) {
	if rec.Server == nil || s.db == nil {
		return
	}
	db, err := s.rootDB()
	if err == nil {
		defer db.Close()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		var engines []string
		engines, err = suite.TableEngines(cctx, db, r.plan.Data.DB, r.plan.Data.Tables)
		if err == nil {
			rec.Server.Engine = strings.Join(engines, ",")
			if s.v.Engine != "" && !strings.EqualFold(rec.Server.Engine, s.v.Engine) {
				rec.Warnf(record.WarnGeneral, "the plan asks for engine %s but the tables are in %s (loaded before engine was set? load them again)", s.v.Engine, rec.Server.Engine)
			}
			return
		}
	}
	if s.v.Engine != "" {
		rec.Warnf(record.WarnGeneral, "the tables' storage engine not read: %v", err)
	}
}
