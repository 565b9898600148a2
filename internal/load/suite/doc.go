// Package suite is the sysbench microbenchmark suite that database
// performance engineers publish, as data: every step with its published
// name and table label, its table group, whether it reads or writes, what
// one operation is, and the sysbench command line that runs it.
//
// # Steps
//
// A step's label is "<name>_range=<R>", as published tables print it
// ("point-query_range=100", "read-only_range=10000"). Steps named ".pre" run
// the same statements as the step without the suffix, on freshly loaded
// tables, before the write steps.
//
// The full run order (Subset("full"), 47 steps):
//
//  1. Read steps on fresh tables: point-query.pre; random-points.pre with
//     R = 10, 100, 1000; read-only.pre with R = 10, 100, 10000;
//     points-covered-pk.pre, points-notcovered-pk.pre,
//     points-covered-si.pre, points-notcovered-si.pre;
//     range-covered-pk.pre, range-notcovered-pk.pre, range-covered-si.pre,
//     range-notcovered-si.pre.
//  2. Write steps: update-inlist, update-index, update-nonindex,
//     update-one, update-zipf, write-only (R = 10000), read-write with
//     R = 10 and 100.
//  3. The post-write flush (see Flush), then the read steps again without
//     .pre, with hot-points after random-points and read-only-simple, -sum,
//     -order, -distinct and -count (R = 1000) after read-only.
//  4. scan, delete, insert.
//
// The published subset (Subset("published"), 32 steps) is the full list
// without the .pre copies: 9 point-query steps, 13 range steps (scan among
// them) and 10 write steps, the set recent publications report. The fast
// subset (Subset("fast")) is point-query, random-points_range=100,
// read-only_range=100, range-covered-si_range=100, update-index and
// insert: a few seconds each is enough for CI and demonstrations.
//
// Tables group rows as published: steps whose name has delete, insert,
// update or write are writes, the other steps with point in the name are
// point queries, the rest are range queries.
//
// # Statements
//
// Stock sysbench 1.0.20 scripts run the steps they can express:
// oltp_point_select (point-query), oltp_read_only (read-only with
// --range_size=R; read-only-simple, -sum, -order and -distinct with only
// that range query enabled and --skip_trx=on), oltp_update_index,
// oltp_update_non_index, oltp_write_only, oltp_read_write, oltp_delete and
// oltp_insert. The project's own scripts (WriteScripts) run the others:
// in-lists of R random keys (random-points, points-*), the same R keys every
// time (hot-points), covered and not-covered range lookups on the primary
// and the secondary index (range-*), COUNT(*) ranges (read-only-count),
// update-inlist, update-one, update-zipf (sysbench 1.0.20 has no zipfian
// --rand-type, so the script draws zipfian keys itself) and scan. Step.SQL
// spells out the statements of one event, and Step.QueriesPerEvent how many
// statements sysbench counts per event.
//
// Every step runs with --events=0, --rand-type=uniform unless the options
// say otherwise, and --range_size=R. The data is loaded once by
// PrepareCommand (sysbench's oltp_read_write prepare).
//
// # Operations
//
// Per-op metrics divide by Step.OpsSource / Step.OpsPer: the server's
// Questions for every step but scan, whose operation is 1,000 rows read
// (Rows_read on MariaDB, Innodb_rows_read on MySQL).
package suite
