// Package insertbench is a load driver for the insert benchmark: its
// tables, its steps, and what each step measures.
//
// The tables are queues. Each has a primary key on an increasing id
// (transactionid), a time stamp, a cash register, a customer, a product, a
// price, and a padding column of random length (data); l.x adds three
// secondary indexes: on (price, customerid), on (cashregisterid, price,
// customerid) and on (price, dateandtime, customerid). Rows are appended
// at the high end of the ids with random values in the indexed columns,
// and deleted from the low end, so that the write steps after the load
// keep the tables' size.
//
// The steps, in the order the benchmark runs them:
//
//	l.i0    load Rows rows per table in id order, no secondary indexes,
//	        RowsPerCommit (100) rows per INSERT
//	l.x     create the three secondary indexes; rate: rows indexed/s
//	l.i1    insert Rows more rows per table as fast as possible, 50 per
//	        commit, each batch followed by a DELETE of as many of the oldest
//	        rows on a second connection
//	l.i2    the same with 5 rows per commit
//	qrN     range queries (10 rows from one of the secondary indexes,
//	        covering) as fast as possible for Duration, while each client's
//	        background writer inserts N rows/s (paced every second against
//	        absolute deadlines) and deletes as many
//	qpN     the same with point queries: 10 ids looked up by primary key
//
// One client per table, each with its own connections: one for l.i0 and
// l.x, two for l.i1 and l.i2 (inserts, deletes), three for the q steps
// (queries, inserts, deletes). Statements are prepared; each INSERT or
// DELETE commits on its own (autocommit). The INSERTs are prepared and
// run by this package on the socket of a connection the MySQL driver
// opened (wireConn), their rows generated into the packet itself.
//
// perfbench run runs a step's driver as a process of its own, perfbench's
// hidden subcommand insert-driver (StartDriver, DriverMain): its CPU time
// is then the driver's alone, not perfbench's measuring too, and it runs
// on the CPUs a load client would (the plan's placement), as sysbench
// does. It connects and prepares, says so, waits for a signal to start
// (the window has opened), says when its last operation ended (the window
// closes), and writes its Result to a file for perfbench to read.
//
// Per kind of operation (insert statement, delete statement, query) a
// step keeps a response-time histogram with the benchmark's fixed buckets
// and the maximum, per second the rows inserted and deleted and the
// queries of each client (a statement counts in the second in which it
// ended, by its time stamp), and from those p50 and p99 of the per-client
// per-second rate of its main operation. Memory does not grow with the
// number of operations: a count per second is all that accumulates.
package insertbench
