package mysqld

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfbench/perfbench/record"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// snap builds a snapshot at t0+at seconds from name/value pairs.
func snap(at float64, kv ...string) *Status {
	var names, values []string
	for i := 0; i < len(kv); i += 2 {
		names = append(names, kv[i])
		values = append(values, kv[i+1])
	}
	s := parseStatus(names, values)
	s.Time = t0.Add(time.Duration(at * float64(time.Second)))
	return s
}

func TestParseStatus(t *testing.T) {
	s := snap(0,
		"Questions", "123",
		"Innodb_lsn_current", "18446744073709551000", // beyond int64
		"Innodb_row_lock_time_avg", "1.5",
		"Rpl_semi_sync_master_status", "OFF",
		"Innodb_buffer_pool_dump_status", "Dumping of buffer pool not started",
		"Ssl_cipher", "",
	)
	want := map[string]float64{"Questions": 123, "Innodb_lsn_current": 18446744073709551000, "Innodb_row_lock_time_avg": 1.5}
	if !reflect.DeepEqual(s.Values, want) {
		t.Errorf("Values = %v, want %v", s.Values, want)
	}
	if v, canon, ok := s.Lookup("QUESTIONS"); !ok || v != 123 || canon != "Questions" {
		t.Errorf("Lookup(QUESTIONS) = %v %q %v", v, canon, ok)
	}
}

func TestDelta(t *testing.T) {
	a := snap(0,
		"Uptime", "1000", "Uptime_since_flush_status", "1000",
		"Questions", "5000", "Com_select", "4000", "Com_show_status", "10",
		"Threads_running", "8", "Threads_connected", "20", "Innodb_buffer_pool_pages_dirty", "300",
		"Innodb_buffer_pool_pages_flushed", "100",
		"Bytes_sent", "9007199254740993", // 2^53+1: float64 cannot hold it
		"Handler_read_key", "70",
		"Only_at_start", "1",
	)
	b := snap(10,
		"Uptime", "1010", "Uptime_since_flush_status", "1010",
		"Questions", "25003", "Com_select", "24000", "Com_show_status", "13",
		"Threads_running", "3", "Threads_connected", "22", "Innodb_buffer_pool_pages_dirty", "250",
		"Innodb_buffer_pool_pages_flushed", "160",
		"Bytes_sent", "9007199254741000",
		"Handler_read_key", "60",
		"Only_at_end", "7",
	)
	// Three statements of perfbench's own in the window (the end
	// snapshot and two SELECTs), bumping these variables.
	db := &DB{}
	a.db, b.db = db, db
	a.own = map[string]float64{"Questions": 4, "Queries": 4, "Com_show_status": 1, "Com_select": 3}
	b.own = map[string]float64{"Questions": 7, "Queries": 7, "Com_show_status": 2, "Com_select": 5}

	d, err := Delta(a, b)
	if err != nil {
		t.Fatal(err)
	}
	wantCounters := map[string]float64{
		"Questions":                        25003 - 5000 - 3,
		"Com_select":                       24000 - 4000 - 2,
		"Com_show_status":                  13 - 10 - 1,
		"Innodb_buffer_pool_pages_flushed": 60,
		"Bytes_sent":                       7,
	}
	if !reflect.DeepEqual(d.Counters, wantCounters) {
		t.Errorf("Counters = %v\nwant %v", d.Counters, wantCounters)
	}
	wantGauges := map[string]float64{
		"Threads_running": 3, "Threads_connected": 22, "Innodb_buffer_pool_pages_dirty": 250,
		"Uptime": 1010, "Uptime_since_flush_status": 1010,
	}
	if !reflect.DeepEqual(d.Gauges, wantGauges) {
		t.Errorf("Gauges = %v\nwant %v", d.Gauges, wantGauges)
	}
	if d.Seconds != 10 || d.UptimeStart != 1000 || d.UptimeEnd != 1010 {
		t.Errorf("Seconds %v, uptime %v→%v", d.Seconds, d.UptimeStart, d.UptimeEnd)
	}
	if len(d.Warnings) != 1 || d.Warnings[0].Code != record.WarnGeneral || !strings.Contains(d.Warnings[0].Text, "Handler_read_key (70 → 60)") {
		t.Errorf("Warnings = %q, want one naming Handler_read_key", d.Warnings)
	}
	op, err := ResolveOp("", b)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.Ops(op); err != nil || n != 20000 {
		t.Errorf("Ops(Questions) = %v, %v; want 20000", n, err)
	}
	if _, err := d.Ops(Op{Variable: "Handler_read_key", Per: 1}); !errors.Is(err, errNoVariable) {
		t.Errorf("Ops of a counter that went backwards: %v", err)
	}

	if _, err := Delta(b, a); err == nil {
		t.Error("Delta with the end before the start: no error")
	}
}

func TestDeltaRestart(t *testing.T) {
	a := snap(0, "Uptime", "1000", "Uptime_since_flush_status", "1000", "Questions", "5000")
	for _, tc := range []struct {
		name     string
		b        *Status
		sentinel error
	}{
		// Uptime went down.
		{"uptime decreased", snap(10, "Uptime", "4", "Uptime_since_flush_status", "4", "Questions", "700"), ErrRestarted},
		// A long window: the server restarted early and ran 500 s
		// of a 600 s window; Uptime still went down.
		{"restart in a long window", snap(600, "Uptime", "500", "Uptime_since_flush_status", "500", "Questions", "90000"), ErrRestarted},
		// Uptime went up, but by less than the time that passed: a
		// restart after a window longer than the old uptime.
		{"uptime grew too little", snap(2000, "Uptime", "1500", "Uptime_since_flush_status", "1500", "Questions", "90000"), ErrRestarted},
		{"flush status", snap(10, "Uptime", "1010", "Uptime_since_flush_status", "3", "Questions", "5100"), ErrStatusReset},
	} {
		_, err := Delta(a, tc.b)
		if !errors.Is(err, tc.sentinel) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.sentinel)
		}
	}
	// Uptime ticks in whole seconds and the query takes time: a second
	// of jitter is not a restart.
	b := snap(10.9, "Uptime", "1010", "Uptime_since_flush_status", "1010", "Questions", "5100")
	if _, err := Delta(a, b); err != nil {
		t.Errorf("no restart: %v", err)
	}
	// Without Uptime: a warning, not an error.
	d, err := Delta(snap(0, "Questions", "1"), snap(1, "Questions", "2"))
	if err != nil || len(d.Warnings) == 0 || !strings.Contains(d.Warnings[0].Text, "Uptime") {
		t.Errorf("no Uptime: %v, warnings %q", err, d.Warnings)
	}
}

func TestIsGauge(t *testing.T) {
	for name, want := range map[string]bool{
		"Threads_running": true, "Open_tables": true, "Innodb_buffer_pool_pages_free": true,
		"Innodb_row_lock_current_waits": true, "Max_used_connections": true, "Uptime": true,
		"Questions": false, "Com_select": false, "Innodb_buffer_pool_pages_flushed": false,
		"Innodb_buffer_pool_pages_made_young": false, "Innodb_data_reads": false, "Rows_read": false,
		"Performance_schema_thread_instances_lost": false, "Performance_schema_digest_lost": false,
		"Rpl_semi_sync_master_clients": true, "Rpl_semi_sync_master_yes_tx": false,
		"wsrep_local_recv_queue": true, "wsrep_replicated_bytes": false,
	} {
		if got := isGauge(name); got != want {
			t.Errorf("IsGauge(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestResolveOp(t *testing.T) {
	// A MariaDB 10.11 snapshot has Rows_read and no Innodb_rows_read; a
	// MySQL 8 one has Innodb_rows_read and no Rows_read.
	maria := snap(0, "Questions", "1", "Queries", "2", "Com_select", "3", "Com_insert", "4", "Rows_read", "5",
		"Handler_read_next", "6", "Bytes_sent", "7", "Innodb_data_reads", "8", "Threads_running", "1")
	mysql := snap(0, "Questions", "1", "Innodb_rows_read", "9")

	ok := []struct {
		spec string
		s    *Status
		want Op
	}{
		{"", maria, Op{Name: "Questions", Variable: "Questions", Per: 1}},
		{"questions", maria, Op{Name: "questions", Variable: "Questions", Per: 1}},
		{"Com_select", maria, Op{Name: "Com_select", Variable: "Com_select", Per: 1}},
		{"rows", maria, Op{Name: "rows", Variable: "Rows_read", Per: 1}},
		{"rows", mysql, Op{Name: "rows", Variable: "Innodb_rows_read", Per: 1}},
		{"rows/1000", maria, Op{Name: "rows/1000", Variable: "Rows_read", Per: 1000}},
		{"Innodb_rows_read/1000", maria, Op{Name: "Innodb_rows_read/1000", Variable: "Rows_read", Per: 1000}},
		{"Rows_read", mysql, Op{Name: "Rows_read", Variable: "Innodb_rows_read", Per: 1}},
		{"Handler_read_next", maria, Op{Name: "Handler_read_next", Variable: "Handler_read_next", Per: 1}},
	}
	for _, tc := range ok {
		got, err := ResolveOp(tc.spec, tc.s)
		if err != nil || got != tc.want {
			t.Errorf("ResolveOp(%q) = %+v, %v; want %+v", tc.spec, got, err, tc.want)
		}
	}

	bad := []struct {
		spec     string
		sentinel error
		text     string
	}{
		{"Com_selct", errNoVariable, "close: Com_select"},
		{"Com_delete", errNoVariable, "close: Com_select"},
		{"Innodb_rows_inserted", errNoVariable, "the server has no status variable Innodb_rows_inserted"},
		{"Threads_running", errNotCounter, "Threads_running is a gauge"},
		{"Questions/0", nil, "not a positive number"},
		{"Questions/x", nil, "not a positive number"},
	}
	for _, tc := range bad {
		_, err := ResolveOp(tc.spec, maria)
		if err == nil || (tc.sentinel != nil && !errors.Is(err, tc.sentinel)) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("ResolveOp(%q) error = %v; want %v containing %q", tc.spec, err, tc.sentinel, tc.text)
		}
	}
}
