package mysqld

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/perfbench/perfbench/internal/textdist"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perfbench/perfbench/record"
)

// Status is one SHOW GLOBAL STATUS snapshot: every numeric variable, with
// the instant it was read.
type Status struct {
	// Time is the middle of the query: the best estimate of the instant
	// the values describe. Took is how long the query took; a window's
	// edges are uncertain by about Took/2.
	Time time.Time
	Took time.Duration
	// Values are the numeric variables by the server's spelling of their
	// names. Text values (ON/OFF, file names) are left out.
	Values map[string]float64

	ints map[string]int64   // integer values, for exact deltas
	own  map[string]float64 // perfbench's own statements so far, this one included
	db   *DB
}

// Status takes a snapshot with one SHOW GLOBAL STATUS. Call it right next to
// the counter reads of a window's edges.
func (d *DB) Status(ctx context.Context) (*Status, error) {
	var names, values []string
	d.mu.Lock()
	defer d.mu.Unlock()
	start := time.Now()
	err := d.queryLocked(ctx, "Com_show_status", "SHOW GLOBAL STATUS", func(rows *sql.Rows) error {
		for rows.Next() {
			var n string
			var v sql.NullString
			if err := rows.Scan(&n, &v); err != nil {
				return err
			}
			names = append(names, n)
			values = append(values, v.String)
		}
		return nil
	})
	end := time.Now()
	if err != nil {
		return nil, d.wrap(err, "read SHOW GLOBAL STATUS from %s", d.Endpoint)
	}
	s := parseStatus(names, values)
	s.Time = start.Add(end.Sub(start) / 2)
	s.Took = end.Sub(start)
	s.own = make(map[string]float64, len(d.own))
	for k, v := range d.own {
		s.own[k] = v
	}
	s.db = d
	return s, nil
}

// parseStatus builds a Status from variable names and their text values,
// keeping the numeric ones. Time is left zero.
func parseStatus(names, values []string) *Status {
	s := &Status{Values: make(map[string]float64, len(names)), ints: make(map[string]int64, len(names))}
	for i, n := range names {
		v := strings.TrimSpace(values[i])
		if v == "" {
			continue
		}
		if iv, err := strconv.ParseInt(v, 10, 64); err == nil {
			s.ints[n] = iv
			s.Values[n] = float64(iv)
			continue
		}
		if uv, err := strconv.ParseUint(v, 10, 64); err == nil {
			s.Values[n] = float64(uv)
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			s.Values[n] = f
		}
	}
	return s
}

// Lookup returns the value of a variable, matching its name without regard
// to case (as the server does), and the server's spelling of it.
func (s *Status) Lookup(name string) (value float64, canonical string, ok bool) {
	if v, ok := s.Values[name]; ok {
		return v, name, true
	}
	for n, v := range s.Values {
		if strings.EqualFold(n, name) {
			return v, n, true
		}
	}
	return 0, "", false
}

// gaugeNames are the status variables that are levels, not running totals:
// a delta of them means nothing, so Delta reports their value at the end of
// the window. Everything else numeric is treated as a counter.
var gaugeNames = map[string]bool{
	"Acl_column_grants": true, "Acl_database_grants": true, "Acl_function_grants": true,
	"Acl_package_body_grants": true, "Acl_package_spec_grants": true, "Acl_procedure_grants": true,
	"Acl_proxy_users": true, "Acl_role_grants": true, "Acl_roles": true, "Acl_table_grants": true, "Acl_users": true,
	"Aria_pagecache_blocks_not_flushed": true, "Aria_pagecache_blocks_unused": true, "Aria_pagecache_blocks_used": true,
	"Binlog_snapshot_position":      true,
	"Current_tls_version":           true,
	"Delayed_insert_threads":        true,
	"Innodb_available_undo_logs":    true,
	"Innodb_buffer_pool_bytes_data": true, "Innodb_buffer_pool_bytes_dirty": true,
	"Innodb_buffer_pool_pages_data": true, "Innodb_buffer_pool_pages_dirty": true, "Innodb_buffer_pool_pages_free": true,
	"Innodb_buffer_pool_pages_latched": true, "Innodb_buffer_pool_pages_misc": true, "Innodb_buffer_pool_pages_old": true,
	"Innodb_buffer_pool_pages_total": true, "Innodb_buffer_pool_load_incomplete": true,
	"Innodb_checkpoint_age": true, "Innodb_checkpoint_max_age": true,
	"Innodb_data_pending_fsyncs": true, "Innodb_data_pending_reads": true, "Innodb_data_pending_writes": true,
	"Innodb_encryption_num_key_requests": true, "Innodb_encryption_rotation_estimated_iops": true,
	"Innodb_history_list_length": true,
	"Innodb_ibuf_free_list":      true, "Innodb_ibuf_segment_size": true, "Innodb_ibuf_size": true,
	"Innodb_mem_adaptive_hash": true, "Innodb_mem_dictionary": true, "Innodb_mem_total": true,
	"Innodb_num_open_files":               true,
	"Innodb_oldest_view_low_limit_trx_id": true,
	"Innodb_onlineddl_pct_progress":       true,
	"Innodb_os_log_pending_fsyncs":        true, "Innodb_os_log_pending_writes": true,
	"Innodb_page_size":                 true,
	"Innodb_redo_log_capacity_resized": true, "Innodb_redo_log_logical_size": true, "Innodb_redo_log_physical_size": true,
	"Innodb_redo_log_enabled": true, "Innodb_redo_log_resize_status": true,
	"Innodb_row_lock_current_waits": true, "Innodb_row_lock_time_avg": true, "Innodb_row_lock_time_max": true,
	"Innodb_undo_tablespaces_active": true, "Innodb_undo_tablespaces_explicit": true,
	"Innodb_undo_tablespaces_implicit": true, "Innodb_undo_tablespaces_total": true,
	"Key_blocks_not_flushed": true, "Key_blocks_unused": true, "Key_blocks_used": true,
	"Max_used_connections": true, "Max_used_connections_time": true,
	"Memory_used": true, "Memory_used_initial": true,
	"Mysqlx_worker_threads": true, "Mysqlx_worker_threads_active": true,
	"Not_flushed_delayed_rows":            true,
	"Ongoing_anonymous_transaction_count": true,
	"Open_files":                          true, "Open_streams": true, "Open_table_definitions": true, "Open_tables": true,
	"Prepared_stmt_count": true,
	"Qcache_free_blocks":  true, "Qcache_free_memory": true, "Qcache_queries_in_cache": true, "Qcache_total_blocks": true,
	"Replica_open_temp_tables": true, "Slave_open_temp_tables": true,
	"Rpl_semi_sync_master_clients": true, "Rpl_semi_sync_source_clients": true,
	"Rpl_semi_sync_master_avg_net_wait_time": true, "Rpl_semi_sync_master_avg_trx_wait_time": true,
	"Rpl_semi_sync_source_avg_trx_wait_time": true,
	"Slave_heartbeat_period":                 true, "Slaves_connected": true, "Slaves_running": true,
	"Ssl_session_cache_size": true, "Ssl_verify_depth": true, "Ssl_verify_mode": true,
	"Ssl_ctx_verify_depth": true, "Ssl_ctx_verify_mode": true,
	"Tc_log_max_pages_used": true, "Tc_log_page_size": true,
	"Threadpool_idle_threads": true, "Threadpool_threads": true,
	"Threads_cached": true, "Threads_connected": true, "Threads_running": true,
	"Tmp_space_used": true,
	// Uptime is reported both ways: its value at the end, and at the
	// two edges in Diff.UptimeStart/UptimeEnd.
	"Uptime": true, "Uptime_since_flush_status": true,
}

// gaugePrefixes mark families of gauges.
var gaugePrefixes = []string{
	"wsrep_",              // Galera: mostly queue lengths and states
	"Performance_schema_", // sizes of lost-instrument counters are counters; see IsGauge
	"Rpl_semi_sync_",
}

// isGauge reports whether a status variable is a level rather than a
// running total. The list is documented in the source (gaugeNames): the
// connection and thread levels, open files and tables, buffer pool page
// levels, pending IO, current lock waits, memory, Max_used_connections and
// Uptime. Performance_schema_*_lost are counters; other Rpl_semi_sync_ and
// wsrep_ variables are gauges except their *_count, *_total, *_bytes and
// *_wait_... totals.
func isGauge(name string) bool {
	if g, ok := gaugeNames[name]; ok {
		return g
	}
	for _, p := range gaugePrefixes {
		if !strings.HasPrefix(name, p) {
			continue
		}
		if p == "Performance_schema_" {
			return !strings.HasSuffix(name, "_lost")
		}
		if p == "Rpl_semi_sync_" {
			// yes_tx, no_tx, net_waits, ... are totals.
			return strings.Contains(name, "_clients") || strings.HasSuffix(name, "_status") || strings.Contains(name, "_avg_")
		}
		// wsrep_: totals end in these.
		for _, s := range []string{"_count", "_bytes", "_total", "_replicated", "_received", "_commits", "_certified"} {
			if strings.HasSuffix(name, s) {
				return false
			}
		}
		return true
	}
	return false
}

// Errors of Delta and ResolveOp.
var (
	// ErrRestarted means the server restarted inside the window: its
	// counters started again and the deltas are void.
	ErrRestarted = errors.New("the server restarted inside the window")
	// ErrStatusReset means FLUSH STATUS reset the counters inside the
	// window.
	ErrStatusReset = errors.New("the status counters were reset (FLUSH STATUS) inside the window")
	// errNoVariable means the server has no such status variable.
	errNoVariable = errors.New("no such status variable")
	// errNotCounter means an op source is a gauge.
	errNotCounter = errors.New("not a counter")
)

// Diff is the change of the server's status over a window.
type Diff struct {
	Start, End time.Time
	Seconds    float64
	// Counters are end − start of every counter variable present in both
	// snapshots, perfbench's own statements taken out (see Own).
	Counters map[string]float64
	// Gauges are the gauge variables at the end of the window.
	Gauges map[string]float64
	// UptimeStart and UptimeEnd are Uptime at the two snapshots.
	UptimeStart, UptimeEnd float64
	// Own counts the statements perfbench sent on its connection inside
	// the window (the end snapshot included), by the variables they
	// bump: Questions, Queries, Com_show_status, Com_select... They are
	// subtracted from Counters, so that Questions counts the load only.
	// Other variables a snapshot bumps (Rows_tmp_read,
	// Created_tmp_tables, Bytes_sent...) keep perfbench's share.
	Own map[string]float64
	// Warnings are conditions that weaken the numbers without voiding
	// them.
	Warnings []record.Warning
}

// warn adds a general warning: status conditions weaken every number of
// the window, not some.
func (d *Diff) warn(text string) {
	d.Warnings = append(d.Warnings, record.Warning{Code: record.WarnGeneral, Text: text})
}

// restartSlack is how far the server's start time (snapshot time − Uptime)
// may move between two snapshots before it counts as a restart: Uptime has
// a resolution of one second, and the query takes a little time.
const restartSlack = 2.5

// Delta returns the change from snapshot a to snapshot b. It fails with
// ErrRestarted when the server restarted in between (its start instant,
// snapshot time minus Uptime, moved later) and with ErrStatusReset after a
// FLUSH STATUS. A counter that went backwards otherwise is left out, with a
// warning.
func Delta(a, b *Status) (*Diff, error) {
	if a == nil || b == nil {
		return nil, errors.New("status delta: missing snapshot")
	}
	if b.Time.Before(a.Time) {
		return nil, errors.New("status delta: the end snapshot was taken before the start snapshot")
	}
	d := &Diff{
		Start:    a.Time,
		End:      b.Time,
		Seconds:  b.Time.Sub(a.Time).Seconds(),
		Counters: map[string]float64{},
		Gauges:   map[string]float64{},
		Own:      map[string]float64{},
	}
	ua, okA := a.Values["Uptime"]
	ub, okB := b.Values["Uptime"]
	if okA && okB {
		d.UptimeStart, d.UptimeEnd = ua, ub
		if moved := startMoved(a, b, ua, ub); moved > restartSlack {
			return nil, fmt.Errorf("status delta over %.1f s: %w (Uptime %g s at the start, %g s at the end); measure the window again", d.Seconds, ErrRestarted, ua, ub)
		}
	} else {
		d.warn("the server reports no Uptime: a restart inside the window would go unnoticed")
	}
	if fa, ok := a.Values["Uptime_since_flush_status"]; ok {
		if fb, ok := b.Values["Uptime_since_flush_status"]; ok {
			if moved := startMoved(a, b, fa, fb); moved > restartSlack {
				return nil, fmt.Errorf("status delta over %.1f s: %w (Uptime_since_flush_status %g s at the start, %g s at the "+
					"end); measure the window again", d.Seconds, ErrStatusReset, fa, fb)
			}
		}
	}
	if a.db != nil && a.db == b.db {
		for k, v := range b.own {
			if n := v - a.own[k]; n != 0 {
				d.Own[k] = n
			}
		}
	} else if a.db != b.db {
		d.warn("the two snapshots come from different connections: perfbench's own statements are not taken out of Questions")
	}
	var backwards []string
	for n, vb := range b.Values {
		if isGauge(n) {
			d.Gauges[n] = vb
			continue
		}
		va, ok := a.Values[n]
		if !ok {
			continue
		}
		var delta float64
		ia, okA := a.ints[n]
		ib, okB := b.ints[n]
		if okA && okB {
			delta = float64(ib - ia) // exact for large counters
		} else {
			delta = vb - va
		}
		delta -= d.Own[n]
		if delta < 0 {
			backwards = append(backwards, fmt.Sprintf("%s (%g → %g)", n, va, vb))
			continue
		}
		d.Counters[n] = delta
	}
	if len(backwards) > 0 {
		sort.Strings(backwards)
		d.warn("status counters went backwards and are left out: " + strings.Join(backwards, ", "))
	}
	return d, nil
}

// startMoved returns how many seconds later the instant "snapshot time −
// elapsed" is at b than at a: ~0 while the clock behind elapsed runs, large
// after it restarted from 0.
func startMoved(a, b *Status, ea, eb float64) float64 {
	sa := float64(a.Time.UnixNano())/1e9 - ea
	sb := float64(b.Time.UnixNano())/1e9 - eb
	return sb - sa
}

// FillServer sets the uptime fields of s from the window.
func (d *Diff) FillServer(s *record.Server) {
	s.UptimeStart, s.UptimeEnd = d.UptimeStart, d.UptimeEnd
}

// Op is a resolved operation source: per-op metrics divide by the delta of
// Variable over the window divided by Per.
type Op struct {
	// Name is what the user asked for ("rows/1000"); Variable the
	// server's status variable ("Innodb_rows_read").
	Name     string
	Variable string
	Per      float64
}

// DefaultOp is the op source when none is asked for.
const DefaultOp = "Questions"

// Source returns the name to store in record.Ops.Source: the variable.
func (o Op) Source() string { return o.Variable }

// rowAliases are the rows-read variables, best first: Innodb_rows_read
// counts rows InnoDB returned (MySQL, older MariaDB), Rows_read rows any
// engine read (MariaDB).
var rowAliases = []string{"Innodb_rows_read", "Rows_read"}

// ResolveOp resolves an op source against a snapshot. spec is a status
// counter name, matched without regard to case ("Questions", "Queries",
// "Com_select", "Handler_read_next", "Bytes_sent", "Innodb_data_reads"...),
// or "rows" for whichever of Innodb_rows_read and Rows_read the server has,
// optionally followed by "/N" to count an op as N units ("rows/1000").
// Asking for Innodb_rows_read on a server that only has Rows_read, or the
// reverse, resolves to the one it has. A gauge is refused (errNotCounter);
// an unknown name fails with errNoVariable naming close alternatives.
func ResolveOp(spec string, s *Status) (Op, error) {
	name := strings.TrimSpace(spec)
	if name == "" {
		name = DefaultOp
	}
	op := Op{Name: name, Per: 1}
	if base, per, ok := strings.Cut(name, "/"); ok {
		n, err := strconv.ParseFloat(strings.TrimSpace(per), 64)
		if err != nil || n <= 0 || math.IsInf(n, 0) {
			return Op{}, fmt.Errorf("op source %q: %q after / is not a positive number", spec, per)
		}
		name, op.Per = strings.TrimSpace(base), n
	}
	candidates := []string{name}
	for _, r := range rowAliases {
		if strings.EqualFold(name, r) || strings.EqualFold(name, "rows") {
			candidates = rowAliases
			if strings.EqualFold(name, "Rows_read") {
				candidates = []string{"Rows_read", "Innodb_rows_read"}
			}
			break
		}
	}
	for _, c := range candidates {
		if _, canon, ok := s.Lookup(c); ok {
			if isGauge(canon) {
				return Op{}, fmt.Errorf("op source %q: %s is a gauge (a level, not a running total): %w; choose a counter such as "+
					"Questions or Com_select", spec, canon, errNotCounter)
			}
			op.Variable = canon
			return op, nil
		}
	}
	return Op{}, fmt.Errorf("op source %q: the server has no status variable %s: %w%s", spec, name, errNoVariable, suggest(name, s))
}

// Ops returns the number of operations of op over the window.
func (d *Diff) Ops(op Op) (float64, error) {
	v, ok := d.Counters[op.Variable]
	if !ok {
		return 0, fmt.Errorf("count ops: %w: %s has no delta over the window (missing at one edge, or it went backwards)", errNoVariable, op.Variable)
	}
	per := op.Per
	if per == 0 {
		per = 1
	}
	return v / per, nil
}

// suggest returns "; close: A, B, C" with the counters whose names are
// nearest to name, or "".
func suggest(name string, s *Status) string {
	type cand struct {
		n string
		d int
	}
	var cs []cand
	ln := strings.ToLower(name)
	for n := range s.Values {
		if isGauge(n) {
			continue
		}
		l := strings.ToLower(n)
		d := textdist.Distance(ln, l)
		limit := len(ln) / 3
		if limit < 2 {
			limit = 2
		}
		switch {
		case d <= limit:
		case len(ln) >= 4 && (strings.Contains(l, ln) || strings.Contains(ln, l)):
			d = limit + 1
		default:
			continue
		}
		cs = append(cs, cand{n, d})
	}
	// Rows: name the other spelling first.
	for _, r := range rowAliases {
		if strings.EqualFold(name, r) || strings.HasSuffix(ln, "rows_read") {
			for _, o := range rowAliases {
				if _, canon, ok := s.Lookup(o); ok {
					cs = append(cs, cand{canon, -1})
				}
			}
			break
		}
	}
	if len(cs) == 0 {
		return "; see SHOW GLOBAL STATUS for the names this server has"
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].n < cs[j].n
	})
	var out []string
	seen := map[string]bool{}
	for _, c := range cs {
		if !seen[c.n] && len(out) < 5 {
			seen[c.n] = true
			out = append(out, c.n)
		}
	}
	return "; close: " + strings.Join(out, ", ")
}
