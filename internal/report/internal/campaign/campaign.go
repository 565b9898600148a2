// Package campaign generates a benchmark campaign of Records shaped like
// those perfbench run writes (counters with their groups, thread roles, the
// server's status deltas, a per-second series), for measuring how reports
// scale. The numbers are made up but deterministic: the same Spec gives the
// same Records, byte for byte.
package campaign

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/perfbench/perfbench/record"
)

// Steps are the 42 sysbench microbenchmarks of the published campaigns, in
// the order they run.
var Steps = []string{
	"hot-points_range=100", "point-query.pre_range=100", "point-query_range=100",
	"points-covered-pk.pre_range=100", "points-covered-pk_range=100",
	"points-covered-si.pre_range=100", "points-covered-si_range=100",
	"points-notcovered-pk.pre_range=100", "points-notcovered-pk_range=100",
	"points-notcovered-si.pre_range=100", "points-notcovered-si_range=100",
	"random-points.pre_range=1000", "random-points.pre_range=100", "random-points.pre_range=10",
	"random-points_range=1000", "random-points_range=100", "random-points_range=10",
	"range-covered-pk.pre_range=100", "range-covered-pk_range=100",
	"range-covered-si.pre_range=100", "range-covered-si_range=100",
	"range-notcovered-pk.pre_range=100", "range-notcovered-pk_range=100",
	"range-notcovered-si.pre_range=100", "range-notcovered-si_range=100",
	"read-only.pre_range=10000", "read-only.pre_range=100", "read-only.pre_range=10",
	"read-only_range=10000", "read-only_range=100", "read-only_range=10",
	"scan_range=100", "delete_range=100", "insert_range=100",
	"read-write_range=100", "read-write_range=10", "update-index_range=100",
	"update-inlist_range=100", "update-nonindex_range=100", "update-one_range=100",
	"update-zipf_range=100", "write-only_range=10000",
}

// Spec is the shape of a campaign.
type Spec struct {
	Steps    int // the first Steps of Steps (at most 42)
	Versions int
	Hosts    int
	Repeats  int
	// Seconds is the window of each step: the series has one point per
	// second.
	Seconds int
	Seed    uint64
}

// Full is the campaign of the published posts: 42 steps × 10 versions ×
// 4 hosts × 5 repeats = 8,400 Records of about 37 KB each.
var Full = Spec{Steps: 42, Versions: 10, Hosts: 4, Repeats: 5, Seconds: 60, Seed: 1}

// Count is the number of Records of the campaign.
func (s Spec) Count() int { return s.Steps * s.Versions * s.Hosts * s.Repeats }

// events are the default events of perfbench run on a machine with a PMU:
// group 1 is the hardware group, the software events are opened alone.
var events = []struct {
	name  string
	group int
	perOp float64 // per query at the base version
	unit  string
}{
	{"cycles", 1, 60000, ""},
	{"instructions", 1, 50000, ""},
	{"cache-references", 1, 900, ""},
	{"cache-misses", 1, 150, ""},
	{"branches", 1, 10000, ""},
	{"branch-misses", 1, 250, ""},
	{"task-clock", 0, 20000, "ns"},
	{"context-switches", 0, 1.2, ""},
	{"cpu-migrations", 0, 0.01, ""},
	{"page-faults", 0, 0.05, ""},
}

// roles are the thread roles with their share of the counts.
var roles = []struct {
	name    string
	threads int
	share   float64
}{
	{"connection", 0, 0.86}, {"innodb-io", 8, 0.05}, {"page-cleaner", 1, 0.03},
	{"innodb-purge", 4, 0.04}, {"unattributed", 0, 0.02},
}

// statusNames are the SHOW GLOBAL STATUS variables a step's delta has,
// besides Questions and the rows read.
var statusNames = func() []string {
	var out []string
	for _, p := range []string{"Com_", "Handler_", "Innodb_buffer_pool_", "Innodb_data_", "Innodb_log_",
		"Innodb_row_lock_", "Bytes_", "Select_", "Sort_", "Table_"} {
		for _, s := range []string{"read", "write", "pages", "requests", "waits", "time", "received", "sent", "scan", "range", "merge", "locks", "hits"} {
			out = append(out, p+s)
		}
	}
	return out
}()

func versions(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("mariadb-10.%d.%d", 2+i/2, 10+i)
	}
	return out
}

// hosts returns the host names and their thread counts.
func hosts(n int) ([]string, []int) {
	names := make([]string, n)
	threads := make([]int, n)
	for i := range names {
		names[i] = fmt.Sprintf("bench%d", i+1)
		threads[i] = []int{1, 6, 16, 24}[i%4]
	}
	return names, threads
}

// generate calls f with each Record of the campaign, in the order a
// campaign measures them: host by host, version by version, step by step,
// repeats last.
func generate(s Spec, f func(*record.Record) error) error {
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	vs := versions(s.Versions)
	hs, ths := hosts(s.Hosts)
	steps := Steps[:s.Steps]
	// Each version moves throughput and the cost of a query on each step
	// by its own factors: instructions per query (code), cycles per
	// instruction (memory) and time off CPU (wait).
	type effect struct{ code, mem, wait float64 }
	eff := make([][]effect, len(vs))
	for v := range vs {
		eff[v] = make([]effect, len(steps))
		for st := range steps {
			e := effect{1, 1, 1}
			if v > 0 {
				drift := 1 + 0.02*float64(v) // later versions run more code
				e.code = drift * math.Exp(rng.NormFloat64()*0.04)
				e.mem = math.Exp(rng.NormFloat64() * 0.03)
				e.wait = math.Exp(math.Abs(rng.NormFloat64()) * 0.02)
			}
			eff[v][st] = e
		}
	}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for h, host := range hs {
		at := start
		for v, version := range vs {
			for st, step := range steps {
				for rep := 1; rep <= s.Repeats; rep++ {
					at = at.Add(time.Duration(s.Seconds+10) * time.Second)
					r := one(rng, s, host, ths[h], version, step, rep, at, eff[v][st].code, eff[v][st].mem, eff[v][st].wait, st)
					if err := f(r); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// one builds the Record of one repeat.
func one(rng *rand.Rand, s Spec, host string, threads int, version, step string, rep int, at time.Time, code, mem, wait float64, stepIndex int) *record.Record {
	noise := func(sd float64) float64 { return math.Exp(rng.NormFloat64() * sd) }
	secs := float64(s.Seconds)
	baseQPS := 8000 * float64(threads) / (1 + float64(stepIndex%7))
	qps := baseQPS / (code * mem * wait) * noise(0.01)
	queries := math.Round(qps * secs)
	r := record.New(record.KindStep)
	r.Host, r.Version, r.Step, r.Threads, r.Repeat = host, version, step, threads, rep
	r.Window = record.Window{Start: at, End: at.Add(time.Duration(s.Seconds) * time.Second), Seconds: secs, Warmup: 5}
	r.Ops = record.Ops{Source: "Questions", Count: queries, Counted: true}
	enabled := uint64(s.Seconds) * 1e9
	perOp := map[string]float64{}
	for _, e := range events {
		v := e.perOp * noise(0.01)
		switch e.name {
		case "cycles", "task-clock":
			v *= code * mem
		case "instructions", "branches", "branch-misses":
			v *= code
		case "cache-misses", "cache-references":
			v *= mem * mem
		}
		perOp[e.name] = v
		raw := uint64(v * queries)
		r.Counters = append(r.Counters, record.Counter{Event: e.name, Group: e.group, Raw: raw, Enabled: enabled, Running: enabled,
			Value: float64(raw), Status: record.StatusCounted, Unit: e.unit})
	}
	for _, ro := range roles {
		role := record.Role{Name: ro.name, Threads: ro.threads}
		if ro.name == "connection" {
			role.Threads = threads
		}
		for _, c := range r.Counters {
			raw := uint64(float64(c.Raw) * ro.share * noise(0.02))
			role.Counters = append(role.Counters, record.Counter{Event: c.Event, Group: c.Group, Raw: raw, Enabled: enabled, Running: enabled,
				Value: float64(raw), Status: record.StatusCounted, Unit: c.Unit})
		}
		r.Roles = append(r.Roles, role)
	}
	r.Status = map[string]float64{"Questions": queries, "Innodb_rows_read": math.Round(queries * 100 * noise(0.01))}
	for i, n := range statusNames {
		if (i+stepIndex)%3 != 0 {
			r.Status[n] = math.Round(queries * float64(1+i%11) * noise(0.05))
		}
	}
	r.Gauges = map[string]float64{"Threads_running": float64(threads + 1), "Open_tables": 64, "Threads_connected": float64(threads + 2)}
	cpu := perOp["task-clock"] * queries / 1e9
	r.OS = &record.OS{UserSeconds: cpu * 0.8, SystemSeconds: cpu * 0.2, VoluntaryCS: math.Round(queries * 1.1), InvoluntaryCS: math.Round(queries * 0.1),
		WriteBytes: math.Round(queries * 40), Disk: &record.Disk{Device: "nvme0n1", Writes: math.Round(queries / 50), WriteSectors: math.Round(queries / 6)},
		RSSBytes: 4 << 30}
	r.Client = &record.Client{Tool: "sysbench", Command: []string{"sysbench", "--threads=" + fmt.Sprint(threads), "oltp_point_select", "run"},
		Seconds: secs + 10, Queries: math.Round(qps * (secs + 10)), Transactions: math.Round(qps * (secs + 10)),
		LatencyAvg: 1000 * float64(threads) / qps, LatencyMax: 20, LatencyP95: 2000 * float64(threads) / qps}
	for t := 1; t <= s.Seconds; t++ {
		q := math.Round(qps * noise(0.03))
		p := record.Point{T: float64(t), Seconds: 1, Ops: q, CPUSeconds: perOp["task-clock"] * q / 1e9, Counters: map[string]float64{}}
		for _, e := range events[:5] {
			p.Counters[e.name] = math.Round(perOp[e.name] * q)
		}
		r.Series = append(r.Series, p)
	}
	r.Server = &record.Server{Pid: 4242, Version: version[len("mariadb-"):] + "-MariaDB", Exe: "/opt/" + version + "/bin/mariadbd",
		Variables:   map[string]string{"innodb_buffer_pool_size": "17179869184", "innodb_flush_log_at_trx_commit": "1", "innodb_page_size": "16384"},
		UptimeStart: at.Sub(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)).Seconds(), UptimeEnd: at.Sub(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)).Seconds() + secs}
	r.Provenance = record.Provenance{Hostname: host, CPUModel: "AMD Ryzen 7 7735HS", CPUs: 16, Kernel: "6.1.0-28-amd64", Perfbench: "campaign",
		Command: []string{"perfbench", "run", "plan.toml"}, Plan: "plan.toml", Written: r.Window.End.Add(time.Second)}
	return r
}

// Write writes the campaign into dir, one file per Record named as
// perfbench run names them, in a folder per host, and returns the number
// of files and bytes written.
func Write(s Spec, dir string) (files int, bytes int64, err error) {
	err = generate(s, func(r *record.Record) error {
		b, err := record.Marshal(r)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, r.Host, record.FileName(r))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write campaign: %w", err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return fmt.Errorf("write campaign: %w", err)
		}
		files++
		bytes += int64(len(b))
		return nil
	})
	return files, bytes, err
}
