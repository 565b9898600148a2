package runner

import (
	"context"

	"github.com/perfbench/perfbench/internal/measure"
	"github.com/perfbench/perfbench/record"
)

// session is one measurement's counters, opened before the load connects:
// *measure.Session. Tests give the runner a fake.
type session interface {
	Measure(ctx context.Context, w measure.WindowSpec) (*record.Record, error)
	Close() error
}

// meter opens a session.
type meter func(ctx context.Context, cfg measure.Config) (session, error)

func startMeasure(ctx context.Context, cfg measure.Config) (session, error) {
	s, err := measure.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}
