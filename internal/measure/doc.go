// Package measure measures one window on one server: perf event counters on
// every thread of the process, the server's SHOW GLOBAL STATUS, /proc and the
// data directory's disk, all read at the same two instants, and returns the
// window as one record.Record. perfbench stat and the step runner both use it:
//
//	s, err := measure.Start(ctx, measure.Config{Pid: pid, Events: list, System: sys, DB: db})
//	// counters are open: start the load now
//	defer s.Close()
//	load, err := measure.StartLoad(argv, measure.LoadOptions{Out: log})
//	r, err := s.Measure(ctx, measure.WindowSpec{Warmup: 5 * time.Second, Duration: 30 * time.Second, Done: load.Done()})
//	measure.ApplyClient(r, load.Client(), "")   // the load generator's results
//
// Both start their loads with StartLoad; a Record says what it measured
// from Config.Identity (perfbench run's version, step, thread count and
// repeat; perfbench stat's defaults), and its counts are divided by its op
// count in one place: by Measure for an op the server counts, by
// ApplyClient for one the client counts.
//
// How the window's edges are read, the CPU time a Record carries, how a
// window ends early and what voids it, the split by thread role, profiles
// and client op sources are described in docs/measure.md.
package measure
