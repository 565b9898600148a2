package record

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// selections are the Selects the tests read Records with: those of the
// report (with and without roles and series) and one that reads all.
var selections = []Select{
	{Status: []string{"Rows_read", "Innodb_rows_read"}},
	{Roles: true, Status: []string{"Rows_read", "Innodb_rows_read"}},
	{Roles: true, Series: true, Status: []string{"Rows_read", "Innodb_rows_read"}},
	{Roles: true, Series: true, ClientLists: true, Extras: true},
}

// treeRecords returns the JSON of every Record file in the tree's
// testdata, as written and as Parse and Marshal write it again in the
// current schema, and a Record with every member perfbench writes.
func treeRecords(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") || !strings.Contains(p, "testdata") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Parse(data)
		if err != nil {
			return nil // not a Record
		}
		out[p] = data
		if again, err := Marshal(r); err == nil {
			out[p+" (schema 2)"] = again
		}
		return nil
	})
	if len(out) < 40 {
		t.Fatalf("%d Records found in the tree's testdata, want the 23 of testdata/records and more", len(out))
	}
	full, err := Marshal(fullRecord())
	if err != nil {
		t.Fatal(err)
	}
	out["every member"] = full
	return out
}

// fullRecord is a Record with every member the fast path reads by hand,
// and with strings that need escapes.
func fullRecord() *Record {
	r := New(KindStep)
	r.Host, r.Version, r.Step, r.Threads, r.Repeat = "h\"1", "v1", "point", 4, 2
	r.Window = Window{Start: time.Date(2026, 11, 2, 6, 15, 20, 123, time.UTC), End: time.Date(2026, 11, 2, 6, 16, 20, 0, time.UTC), Seconds: 60}
	r.Ops = Ops{Source: "Questions", Count: 1e6, Counted: true}
	x := 0.25
	r.Counters = []Counter{
		{Event: "cycles", Group: 1, Raw: 1 << 63, Enabled: 60e9, Running: 30e9, Value: 1.5e19, Status: StatusScaled, PerOp: &x},
		{Event: "instructions", Group: -1, Status: StatusNotSupported, Reason: "no PMU (\"ENOENT\") — VM", Unit: "ns", Scale: 2.3283064365386963e-10},
	}
	r.Roles = []Role{
		{Name: "connection", Threads: 4, Counters: r.Counters[:1]},
		{Name: "log", Counters: []Counter{}},
		{Name: "main"},
	}
	r.Status = map[string]float64{"Questions": 1e6, "Rows_read": 7, "Innodb_rows_read": 1e-3}
	r.Series = []Point{{T: 1, Seconds: 1, Ops: 3, Counters: map[string]float64{"cycles": 4}}}
	r.Client = &Client{Tool: "sysbench", Queries: 5, Intervals: []Interval{{At: 1, QPS: 2}}, Histogram: []Bucket{{UpToMs: 1, Count: 2}}}
	r.Warnings = []Warning{{Code: WarnMultiplexed, Events: []string{"cycles"}, Text: "cycles ran 50% of the window"}}
	smallMembersOf(r)
	return r
}

// smallMembersOf sets every field of the small members of r (see
// Selective.small) that fullRecord leaves unset.
func smallMembersOf(r *Record) {
	r.Error, r.Group, r.Profile, r.AAOf = "one \"quoted\"\nword", "point", "cpu.pprof", "v0"
	r.Window.Warmup, r.Window.StatusLag, r.Window.Counting = 5, 0.015625, CountingThread
	r.Ops.Per, r.Ops.Estimated = 1000, true
	r.Gauges = map[string]float64{"Threads_running": 2, "Open_tables": 64}
	r.Metrics = map[string]float64{"qps": 1.5, "cpu/o": 2e-5}
	r.OS = &OS{UserSeconds: 1.83, SystemSeconds: 0.46, VoluntaryCS: 106885, InvoluntaryCS: 9717, ReadBytes: 1, WriteBytes: 3886720,
		ReadChars: 2, WriteChars: 3, ReadCalls: 4, WriteCalls: 5, RSSBytes: 1 << 32, HostCPUSeconds: 7.5,
		Disk: &Disk{Device: "nvme0n1", Reads: 1, ReadSectors: 2, Writes: 1943, WriteSectors: 16195, IOTicks: 12}}
	c := r.Client
	c.Command, c.Whole, c.Started, c.Seconds = []string{"sysbench", "--threads=1", "oltp_point_select", "run"}, true,
		time.Date(2026, 11, 2, 6, 15, 10, 5, time.FixedZone("", 3600)), 70
	c.Reads, c.Writes, c.Other, c.Transactions, c.Events, c.Errors, c.Reconnects, c.Inserts = 1, 2, 3, 4, 5, 6, 7, 8
	c.LatencyMin, c.LatencyAvg, c.LatencyMax, c.LatencyP95, c.Percentile, c.ExitCode = 0.1, 0.6174860800214985, 20, 1.23, 99, 3
	r.Server = &Server{Pid: 4242, Version: "10.5.17-MariaDB", VersionComment: "mariadb.org binary", Exe: "/opt/mariadb/bin/mariadbd",
		BuildID: "ab12", Basedir: "/opt/mariadb", Datadir: "/data", Port: 3306, Socket: "/tmp/s.sock", Config: "/etc/my.cnf",
		Variables: map[string]string{"innodb_buffer_pool_size": "17179869184", "sql_mode": ""}, UptimeStart: 108920, UptimeEnd: 108980}
	paranoid, nmi := 2, 0
	r.Provenance = Provenance{Hostname: "bench1", CPUModel: "AMD Ryzen 7 7735HS", CPUs: 16, Kernel: "6.1.0-28-amd64",
		PerfEventParanoid: &paranoid, NMIWatchdog: &nmi, Virtualization: "kvm", PMUs: []string{"cpu", "msr"}, Perfbench: "v1.2",
		Command: []string{"perfbench", "run", "plan.toml"}, Plan: "plan.toml", PlanSHA256: "e3b0", Written: time.Date(2026, 11, 2, 6, 16, 21, 0, time.UTC),
		Origin:    map[string]string{"perf.target": "process id '4121'"},
		Placement: &Placement{Mode: "split", Server: "0-7", Client: "8-15", ServerAllowed: "0-7", ClientAllowed: "8-15", ServerThreadsElsewhere: 1}}
}

// TestSelectiveAsGeneral checks that the fast path of Selective reads
// every Record of the tree's testdata exactly as the general way does
// (the Record's JSON pruned, then decoded by Parse), with each
// selection, and that it is the path taken for Records as perfbench
// writes them.
func TestSelectiveAsGeneral(t *testing.T) {
	recs := treeRecords(t)
	for name, data := range recs {
		for _, sel := range selections {
			d := NewSelective(sel)
			want, err := d.general(data)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, ok := d.fast(data)
			if !ok {
				t.Errorf("%s with %+v: the fast path refused it", name, sel)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s with %+v: fast path read\n%+v\nwant\n%+v", name, sel, got, want)
			}
			// And again with the buffers of the first read reused.
			if again, _ := d.Parse(data); !reflect.DeepEqual(again, want) {
				t.Errorf("%s with %+v: second read differs", name, sel)
			}
		}
	}
	// The selection took out what it says, no more.
	d := NewSelective(selections[0])
	r, err := d.Parse(recs["every member"])
	if err != nil {
		t.Fatal(err)
	}
	if r.Roles != nil || r.Series != nil || r.Client.Intervals != nil || r.Client.Histogram != nil || len(r.Status) != 2 ||
		len(r.Counters) != 2 || r.Client.Queries != 5 {
		t.Errorf("read with %+v: %+v", selections[0], r)
	}
	if r.Gauges != nil || !reflect.DeepEqual(r.Server, &Server{Version: "10.5.17-MariaDB"}) || r.Client.Command != nil ||
		!reflect.DeepEqual(r.Provenance, Provenance{Hostname: "bench1", CPUModel: "AMD Ryzen 7 7735HS", CPUs: 16}) || r.OS.Disk.Writes != 1943 || r.Metrics["qps"] != 1.5 {
		t.Errorf("read with %+v, the extras: %+v", selections[0], r)
	}
	all := selections[len(selections)-1]
	r, err = NewSelective(all).Parse(recs["every member"])
	whole, _ := Parse(recs["every member"])
	if err != nil || !reflect.DeepEqual(r, whole) {
		t.Errorf("read with %+v: %+v, %v; want %+v", all, r, err, whole)
	}
}

// TestSelectiveSmallByHand checks that the fast path reads every small
// member of a Record by hand (Selective.small): of a Record with every
// member, only the warnings (and the series, when read) are left to the
// general decoder.
func TestSelectiveSmallByHand(t *testing.T) {
	data, err := Marshal(fullRecord())
	if err != nil {
		t.Fatal(err)
	}
	for _, sel := range selections[:3] {
		d := NewSelective(sel)
		if _, ok := d.fast(data); !ok {
			t.Fatalf("%+v: the fast path refused the Record", sel)
		}
		var rest map[string]json.RawMessage
		if err := json.Unmarshal(d.rest, &rest); err != nil {
			t.Fatal(err)
		}
		want := []string{"warnings"}
		if sel.Series {
			want = append(want, "series")
		}
		if got := slices.Sorted(maps.Keys(rest)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("%+v: left %v to the general decoder, want %v", sel, got, want)
		}
	}
}

// smallVariants are members of a Record that the readers of small
// members must read as encoding/json does, or leave to the general
// decoder: escapes, nulls, names given twice or in another case, values
// of another type, numbers out of range, unknown members.
var smallVariants = []string{
	`"host":"a\u0062"`, `"host":null`, `"host":1`, `"host":"x","host":"y"`, `"Host":"x"`, `"host":"x","HOST":"y"`,
	`"host":"\ud800"`, `"host":"é"`, "\"host\":\"\xff\"", "\"host\":\"a\tb\"", `"host":"a\"b"`,
	`"threads":1e2`, `"threads":99999999999999999999`, `"threads":-3`, `"threads":1.0`, `"threads":null`, `"threads":0`,
	`"repeat":"1"`, `"repeat":-1`, `"schema":1`, `"kind":"stat"`, `"outcome":null`, `"outcome":"failed","error":"a\nb"`,
	`"error":"é\u00e9"`, `"profile":null`, `"aa_of":"x"`, `"group":"point"`, `"warnings":[],"host":"h"`,
	`"window":null`, `"window":{}`, `"window":[]`, `"window":1`, `"window":{"start":null}`,
	`"window":{"start":"2026-11-02T06:15:20+01:00","end":"2026-11-02T06:16:20.123456789-07:30"}`,
	`"window":{"start":"2026-11-02T06:15:20Z","start":"2026-11-02T06:15:21Z"}`, `"window":{"start":"bad"}`,
	`"window":{"start":"2026-11-02T06:15:20\u005a"}`, `"window":{"start":1}`, `"window":{"seconds":1e400}`,
	`"window":{"seconds":"1"}`, `"window":{"x":1,"seconds":2}`, `"window":{"Seconds":2}`, `"window":{"seconds":-0.5e-3,"counting":"cgroup"}`,
	`"window":{"start":"2026-11-02T06:15:20Z"},"window":{"seconds":1}`,
	`"ops":{"counted":true,"estimated":null}`, `"ops":{"counted":1}`, `"ops":{"counted":"true"}`,
	`"ops":{"source":"Questions","count":12345678901234567890,"per":1e3}`,
	`"gauges":{}`, `"gauges":null`, `"gauges":{"a":1,"a":2}`, `"gauges":{"a":null}`, `"gauges":{"a\u0062":1}`, "\"gauges\":{\"\xff\":1}",
	`"gauges":{"a":"1"}`, `"gauges":[1]`, `"metrics":{"qps":1,"cpu/o":2e-5}`, `"metrics":{"":0}`,
	`"os":null`, `"os":{}`, `"os":{"disk":null}`, `"os":{"disk":{"device":"sda","x":1}}`, `"os":{"disk":{"device":"sda"},"disk":null}`,
	`"os":{"user_seconds":1,"rss_bytes":1e20,"disk":{"io_ms":5}}`,
	`"client":null`, `"client":{"command":[]}`, `"client":{"command":null}`, `"client":{"command":["a",null,"b"]}`, `"client":{"command":["a",1]}`,
	`"client":{"intervals":[{"at":1}],"histogram":null,"queries":3}`, `"client":{"intervals":[],"intervals":[]}`, `"client":{"Intervals":[]}`,
	`"client":{"started":"2026-11-02T06:15:20.5Z","exit_code":2,"whole_run":false}`, `"client":{"exit_code":2.5}`, `"client":{"tool":"x","x":[1}`,
	`"server":{"variables":{"a":"b","c":null}}`, `"server":{"variables":{"a":"\u00e9","b":""}}`, `"server":{"variables":null}`,
	`"server":{"variables":{}}`, `"server":{"variables":{"a":1}}`, `"server":{"port":65536,"pid":-1}`, `"server":null`,
	`"provenance":{"perf_event_paranoid":null,"nmi_watchdog":0,"pmus":[],"origin":{}}`, `"provenance":{"perf_event_paranoid":-1,"perf_event_paranoid":null}`,
	`"provenance":{"placement":{"mode":"split","x":1}}`, `"provenance":{"placement":null}`, `"provenance":{"placement":{"server_threads_elsewhere":3}}`,
	`"provenance":{"written":null,"cpus":2}`, `"provenance":{"CPUS":3,"Hostname":1,"cpus":2}`, `"provenance":{"cpus":1,"cpus":2}`,
	`"provenance":{"hostname":"a","hostname":"b"}`, `"provenance":{"hostname":1,"x":2}`, `"server":{"pid":"x"}`, `"gauges":{"a":"x"}`,
	`"client":{"command":"x"}`, `"client":{"Command":["a"]}`, `"client":{"command":["a"],"command":null}`,
	`"client":{"command":.x"},"queries":1}`, `"client":{"histogram":n[ull,"queries":3}`, `"provenance":{"nmi_watchdog":-1{"cpus":1}`,
	`"provenance":{"plan":"a"x,"cpus":1}`, `"provenance":{"origin":{"a":"b"},"command":["perfbench"]}`, `"provenance":null`, `"provenance":[]`,
}

// TestSelectiveSmallMembers checks that each of smallVariants in a
// Record is read as the general way reads it, Record or error, read
// first and after a Record with every member.
func TestSelectiveSmallMembers(t *testing.T) {
	full, err := Marshal(fullRecord())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range smallVariants {
		data := []byte(`{"schema":2,"kind":"step","outcome":"ok","version":"v","step":"s",` + v + `,"counters":[]}`)
		for _, sel := range selections {
			want, wantErr := NewSelective(sel).general(data)
			for _, before := range [][]byte{nil, full} {
				d := NewSelective(sel)
				d.Parse(before)
				got, err := d.Parse(data)
				if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
					t.Errorf("%s with %+v: error %v, want %v", v, sel, err, wantErr)
				} else if !reflect.DeepEqual(got, want) {
					t.Errorf("%s with %+v: read\n%+v\nwant\n%+v", v, sel, got, want)
				}
			}
		}
	}
}

// TestSelectiveRefuses checks that what the fast path cannot read as
// encoding/json would goes the general way, which gives the Record or
// the error Parse gives.
func TestSelectiveRefuses(t *testing.T) {
	good, err := Marshal(fullRecord())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) []byte {
		if !bytes.Contains(good, []byte(old)) {
			t.Fatalf("no %s in the Record", old)
		}
		return bytes.Replace(good, []byte(old), []byte(new), 1)
	}
	for _, c := range []struct {
		name string
		data []byte
		ok   bool // the general way reads it
	}{
		{"member in another case", edit(`"counters": [`, `"Counters": [`), true},
		{"escaped member name", edit(`"roles": [`, `"rol\u0065s": [`), true},
		{"member given twice", edit(`"counters": [`, `"counters": [], "counters": [`), true},
		{"counter member in another case", edit(`"event": "cycles"`, `"EVENT": "cycles"`), true},
		{"unknown counter member", edit(`"event": "cycles"`, `"event": "cycles", "x": [1}`), false},
		{"float into an int", edit(`"group": 1`, `"group": 1.5`), false},
		{"negative raw", edit(`"raw": 9223372036854775808`, `"raw": -1`), false},
		{"number out of range", edit(`"value": 15000000000000000000`, `"value": 1e999`), false},
		{"NaN", edit(`"value": 15000000000000000000`, `"value": NaN`), false},
		{"leading zero", edit(`"raw": 9223372036854775808`, `"raw": 0123`), false},
		{"raw past 64 bits", edit(`"raw": 9223372036854775808`, `"raw": 18446744073709551616`), false},
		{"raw of 20 digits", edit(`"raw": 9223372036854775808`, `"raw": 18446744073709551615`), true},
		{"value of 17 digits", edit(`"value": 15000000000000000000`, `"value": 12345678901234567`), true},
		{"value of 16 digits", edit(`"value": 15000000000000000000`, `"value": 9007199254740993`), true},
		{"group past int", edit(`"group": 1`, `"group": 9223372036854775808`), false},
		{"group with an exponent", edit(`"group": 1`, `"group": 1e2`), false},
		{"escaped event", edit(`"event": "cycles"`, `"event": "cy\\cles"`), true},
		{"event with a backspace", edit(`"event": "cycles"`, `"event": "cy\bcles"`), true},
		{"string for a number", edit(`"value": 15000000000000000000`, `"value": "1"`), false},
		{"number for a string", edit(`"event": "cycles"`, `"event": 1`), false},
		{"lone surrogate", edit(`"event": "cycles"`, `"event": "cy\ud800cles"`), true},
		{"null status variable", edit(`"Rows_read": 7`, `"Rows_read": null`), true},
		{"a status variable left out not JSON", edit(`"Questions": 1000000`, `"Questions": 10000"0`), false},
		{"a status variable left out not JSON, a bracket", edit(`"Questions": 1000000`, `"Questions": 10000{0`), false},
		{"truncated", good[:len(good)/2], false},
		{"trailing bytes", append(append([]byte{}, good...), `{"x":`...), true},
		{"not an object", []byte(`[1, 2]`), false},
		{"unknown outcome", edit(`"outcome": "ok"`, `"outcome": "fine"`), false},
		{"unknown status", edit(`"status": "scaled"`, `"status": "fine"`), false},
	} {
		for _, sel := range selections {
			d := NewSelective(sel)
			want, wantErr := d.general(c.data)
			got, err := d.Parse(c.data)
			if (wantErr == nil) != c.ok {
				t.Errorf("%s: the general way gave %v, want ok=%v", c.name, wantErr, c.ok)
			}
			if wantErr != nil {
				if err == nil || err.Error() != wantErr.Error() || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s with %+v: error %v, want %v", c.name, sel, err, wantErr)
				}
				continue
			}
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s with %+v: read %+v, %v; want %+v", c.name, sel, got, err, want)
			}
		}
	}
}

// FuzzSelective checks that Selective.Parse gives what the general way
// gives, Record or error, on any input, read after another (whose
// counters' shapes it may take, see Selective.shaped); seeded with the
// tree's Records.
func FuzzSelective(f *testing.F) {
	recs := treeRecords(f)
	for _, data := range recs {
		f.Add(recs["every member"], data, uint8(0))
		f.Add(data, data, uint8(1))
	}
	for _, v := range smallVariants {
		f.Add(recs["every member"], []byte(`{"schema":2,"kind":"step","outcome":"ok","version":"v","step":"s",`+v+`}`), uint8(len(v)))
	}
	f.Add([]byte(`{}`),
		[]byte(`{"schema":2,"kind":"step","outcome":"ok","version":"v","step":"s","counters":[{"event":"e","status":"counted","raw":1}],"roles":[{"name":"x","counters":[]}]}`), uint8(3))
	f.Fuzz(func(t *testing.T, before, data []byte, which uint8) {
		d := NewSelective(selections[int(which)%len(selections)])
		want, wantErr := d.general(data)
		d.Parse(before)
		got, err := d.Parse(data)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("error %v, want %v", err, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Fatalf("read\n%s\nwant\n%s", g, w)
		}
	})
}

// editMembers returns the Record's JSON in data edited as jq or Python
// scripts edit Records: its members in an order shuffled by perm (none
// when 0), member dup-1 given again after them (none when 0), member
// typo-1 with its name misspelt (none when 0); data itself when its
// members cannot be followed.
func editMembers(data []byte, perm uint64, dup, typo uint8) []byte {
	type member struct{ name, value []byte }
	var ms []member
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return data
	}
	if _, ok := eachMember(data, i, func(key []byte, v, end int) bool {
		ms = append(ms, member{key, data[v:end]})
		return true
	}, nil); !ok || len(ms) == 0 {
		return data
	}
	if perm != 0 {
		rand.New(rand.NewPCG(perm, 1)).Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
	}
	if dup != 0 {
		ms = append(ms, ms[int(dup-1)%len(ms)])
	}
	if typo != 0 {
		k := int(typo-1) % len(ms)
		name := slices.Clone(ms[k].name)
		switch {
		case len(name) < 2:
			name = append(name, 'x')
		case typo%2 == 0:
			name = slices.Insert(name, 1, name[1]) // "opps"
		default:
			name = name[:len(name)-1]
		}
		ms[k].name = name
	}
	out := []byte{'{'}
	for j, m := range ms {
		if j > 0 {
			out = append(out, ", "...)
		}
		out = append(append(append(append(out, '"'), m.name...), `": `...), m.value...)
	}
	return append(out, '}')
}

// FuzzSelectiveEdited checks that Records edited as jq or Python edit
// them (members moved, given twice, misspelt: see editMembers) are read
// alike by every reader: with each selection, Selective's fast path gives
// what its general way gives (Record or error), and when Parse reads the
// whole Record, each selection gives that Record without what it leaves
// out (stripped); seeded with the tree's Records.
func FuzzSelectiveEdited(f *testing.F) {
	recs := treeRecords(f)
	for _, name := range slices.Sorted(maps.Keys(recs)) {
		f.Add(recs[name], uint64(0), uint8(0), uint8(0))
		f.Add(recs[name], uint64(len(name)), uint8(len(name)%7), uint8(len(name)%5))
	}
	f.Fuzz(func(t *testing.T, data []byte, perm uint64, dup, typo uint8) {
		edited := editMembers(data, perm, dup, typo)
		whole, wholeErr := Parse(edited)
		for _, sel := range selections {
			d := NewSelective(sel)
			want, wantErr := d.general(edited)
			got, err := d.Parse(edited)
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("%+v: error %v, the general way's %v", sel, err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%+v: read\n%+v\nthe general way read\n%+v", sel, got, want)
			}
			if wholeErr != nil {
				continue
			}
			if err != nil {
				t.Fatalf("%+v: %v, though Parse reads the whole Record", sel, err)
			}
			if w := stripped(whole, sel); !reflect.DeepEqual(got, w) {
				t.Fatalf("%+v: read\n%+v\nParse of the whole read\n%+v", sel, got, w)
			}
		}
	})
}

// TestPruneObject checks the pruning on JSON that trips naive scanners:
// escaped quotes and backslashes in strings, brackets inside strings,
// member names spelt in another case or with escapes, nested objects.
func TestPruneObject(t *testing.T) {
	spec := (Select{Status: []string{"Rows_read", "Innodb_rows_read"}}).pruning()
	for _, c := range []struct{ in, want string }{
		{`{"a":"x\\","Series":[{"t":"]}\""}],"b":1}`, `{"a":"x\\","b":1}`},
		{` { "status" : {"Questions":3,"Rows_read":7, "rows_read":8} , "roles":[[{}]] } `, `{"status":{"Rows_read":7},"roles":[[{}]]}`},
		{`{"client":{"tool":"s","intervals":[1,2],"queries":4},"rol\u0065s":null}`, `{"client":{"tool":"s","queries":4}}`},
		{`{}`, `{}`},
		{`{"a":"\\\"]","series":{"k":"\u0022}"},"b":[{"c":"\\"}]}`, `{"a":"\\\"]","b":[{"c":"\\"}]}`},
	} {
		spec := spec
		spec["roles"] = member{drop: strings.Contains(c.in, "\\u0065")}
		got, ok := pruneObject(nil, []byte(c.in), spec)
		if !ok || string(got) != c.want {
			t.Errorf("pruneObject(%s) = %s, %v; want %s", c.in, got, ok, c.want)
		}
	}
	for _, bad := range []string{`{"a":1`, `{"a" 1}`, `[1]`, `{"a":"x}`, `{"a":1} x`, `{"a":"x\"}`, `{"a":"x\`, `{"series":[{"a":"\"]}`} {
		if got, ok := pruneObject(nil, []byte(bad), spec); ok {
			t.Errorf("pruneObject(%s) = %s, want a failure", bad, got)
		}
	}
}

// TestMarshalBulkyLast checks that perfbench writes a Record's bulky
// members last, status, roles and series in that order, after its
// provenance: what lets a reader stop early (Selective.ParseStart).
func TestMarshalBulkyLast(t *testing.T) {
	data, err := Marshal(fullRecord())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	end, ok := eachMember(data, 0, func(key []byte, _, _ int) bool {
		names = append(names, string(key))
		return true
	}, nil)
	if !ok || skipSpace(data, end) != len(data) {
		t.Fatalf("cannot follow %s", data)
	}
	n := len(names)
	if n < 5 || !slices.Equal(names[n-3:], []string{"status", "roles", "series"}) || !slices.Contains(names[:n-3], "provenance") {
		t.Errorf("members written in the order %v, want the provenance before status, roles and series, which end the Record", names)
	}
}

// TestParseStart checks that no first bytes of a Record are taken for
// all of it: a member that matters may follow any other.
func TestParseStart(t *testing.T) {
	full, err := Marshal(fullRecord())
	if err != nil {
		t.Fatal(err)
	}
	for _, sel := range selections {
		d := NewSelective(sel)
		for n := range len(full) + 1 {
			if _, _, ok := d.ParseStart(full[:n]); ok {
				t.Fatalf("%+v: the first %d bytes of %d taken for the Record", sel, n, len(full))
			}
		}
	}
}

// stripped is the Record r as a Selective with sel reads it: without
// the members sel leaves out.
func stripped(r *Record, sel Select) *Record {
	c := *r
	if !sel.Roles {
		c.Roles = nil
	}
	if !sel.Series {
		c.Series = nil
	}
	if sel.Status != nil && c.Status != nil {
		c.Status = map[string]float64{}
		for _, k := range sel.Status {
			if v, ok := r.Status[k]; ok {
				c.Status[k] = v
			}
		}
	}
	if c.Client != nil {
		cl := *c.Client
		if !sel.ClientLists {
			cl.Intervals, cl.Histogram = nil, nil
		}
		if !sel.Extras {
			cl.Command = nil
		}
		c.Client = &cl
	}
	if !sel.Extras {
		c.Gauges = nil
		if c.Server != nil {
			c.Server = &Server{Version: r.Server.Version}
		}
		c.Provenance = Provenance{Hostname: r.Provenance.Hostname, CPUModel: r.Provenance.CPUModel, CPUs: r.Provenance.CPUs}
	}
	return &c
}

// TestSelectiveReadsEveryMember checks that what a Record says is read
// whatever its members' order and whichever members are left out:
// members moved after the roles and the series (as jq and Python put a
// member they add), a warning there validated, a misspelt member and a
// member given twice named in a warning, each read as Parse reads the
// whole Record.
func TestSelectiveReadsEveryMember(t *testing.T) {
	full, err := Marshal(fullRecord())
	if err != nil {
		t.Fatal(err)
	}
	end := bytes.LastIndexByte(full, '}')
	tail := func(member string) []byte {
		return append(append(append([]byte(nil), full[:end]...), ", "+member...), '}')
	}
	warning := `"warnings": [{"code": "busy", "text": "edited in after the series"}]`
	withoutWarnings := bytes.Replace(full, []byte(`"warnings": [`), []byte(`"warnings_": [`), 1)
	moved := append(append([]byte(nil), withoutWarnings[:bytes.LastIndexByte(withoutWarnings, '}')]...), ", "+warning+"}"...)
	for _, c := range []struct {
		name string
		data []byte
		want string // a warning text the Record must carry; "" for an error
	}{
		{"a warning after the series", moved, "edited in after the series"},
		{"an unknown code after the series", tail(`"warnings": [{"code": "nope", "text": "x"}]`), ""},
		{"a misspelt member", bytes.Replace(full, []byte(`"ops":`), []byte(`"opps":`), 1), `member "opps", which is not a Record member: it was not read (did you mean "ops"?)`},
		{"a member given twice", tail(`"step": "point"`), `gives its member "step" more than once`},
		{"the schema after the series", tail(`"schema": 3`), ""},
	} {
		whole, wholeErr := Parse(c.data)
		if (wholeErr == nil) != (c.want != "") {
			t.Fatalf("%s: Parse gave %v", c.name, wholeErr)
		}
		if wholeErr == nil && !slices.ContainsFunc(whole.WarningTexts(), func(s string) bool { return strings.Contains(s, c.want) }) {
			t.Errorf("%s: Parse gave the warnings %q, want one with %q", c.name, whole.WarningTexts(), c.want)
		}
		for _, sel := range selections {
			got, err := NewSelective(sel).Parse(c.data)
			if (err == nil) != (wholeErr == nil) {
				t.Errorf("%s with %+v: %v, want %v", c.name, sel, err, wholeErr)
				continue
			}
			if err == nil && !reflect.DeepEqual(got, stripped(whole, sel)) {
				t.Errorf("%s with %+v: read\n%+v\nwant\n%+v", c.name, sel, got, stripped(whole, sel))
			}
		}
	}
}

// TestSelectiveInSequence checks that one Selective reads Records one
// after another as each is read alone, though their counters share an
// array and their event names are taken from the Record before when
// they match: no Record's counters change as the next are read, or when
// a list of them is appended to.
func TestSelectiveInSequence(t *testing.T) {
	recs := treeRecords(t)
	names := slices.Sorted(maps.Keys(recs))
	// Each Record read after every other, and after Records whose
	// event names are the same bytes escaped otherwise.
	escaped := bytes.ReplaceAll(recs["every member"], []byte(`"cycles"`), []byte(`"cy\u0063les"`))
	backslash := bytes.ReplaceAll(recs["every member"], []byte(`"cycles"`), []byte(`"cy\\bcles"`))
	backspace := bytes.ReplaceAll(recs["every member"], []byte(`"cycles"`), []byte(`"cy\bcles"`))
	datas := [][]byte{escaped, backslash, backspace, escaped}
	for _, n := range names {
		datas = append(datas, recs[n])
	}
	datas = append(datas, datas...)
	for _, sel := range selections {
		d := NewSelective(sel)
		var got, want []*Record
		for i, data := range datas {
			w, err := NewSelective(sel).Parse(data)
			if err != nil {
				t.Fatalf("Record %d: %v", i, err)
			}
			r, err := d.Parse(data)
			if err != nil || !reflect.DeepEqual(r, w) {
				t.Fatalf("%+v: Record %d read after the others: %v\n%+v\nwant\n%+v", sel, i, err, r, w)
			}
			got, want = append(got, r), append(want, w)
			if len(r.Counters) > 0 {
				_ = append(r.Counters, Counter{Event: "appended"})
			}
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("%+v: Record %d changed as the next were read", sel, i)
			}
		}
		if got[1].Counters[0].Event != "cy\\bcles" || got[2].Counters[0].Event != "cy\bcles" || got[3].Counters[0].Event != "cycles" {
			t.Errorf("%+v: events read %q, %q, %q", sel, got[1].Counters[0].Event, got[2].Counters[0].Event, got[3].Counters[0].Event)
		}
	}
}

// TestSelectiveCounterShapes checks that a counter read by the shape of
// the counter at its position in the Record before (Selective.shaped)
// takes only what those bytes say: each Record below differs from the one
// read before it in one role counter (a number, its event, its status, a
// member added, a number spelt otherwise or of another type, spaces), and
// is read as a fresh Selective reads it.
func TestSelectiveCounterShapes(t *testing.T) {
	r := fullRecord()
	role := []Counter{
		{Event: "cycles", Group: 1, Raw: 100, Enabled: 60, Running: 60, Value: 100, Status: StatusCounted},
		{Event: "instructions", Group: 1, Raw: 200, Enabled: 60, Running: 30, Value: 400, Status: StatusScaled},
		{Event: "task-clock", Raw: 5, Enabled: 60, Running: 60, Value: 5, Status: StatusCounted, Unit: "ns"},
	}
	r.Roles = []Role{{Name: "connection", Threads: 2, Counters: role}, {Name: "log", Threads: 1, Counters: slices.Clone(role)}}
	indented, err := Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, indented); err != nil {
		t.Fatal(err)
	}
	base := compact.Bytes()
	n := len(r.Counters) + 2*len(role)
	counter := `{"event":"instructions","group":1,"raw":200,"time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"scaled"}`
	if bytes.Count(base, []byte(counter)) != 2 {
		t.Fatalf("Marshal wrote the roles' counters otherwise:\n%s", base)
	}
	variants := []string{
		`{"event":"instructions","group":1,"raw":201,"time_enabled_ns":61,"time_running_ns":31,"value":402,"status":"scaled"}`,
		`{"event":"instructions:u","group":1,"raw":200,"time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"scaled"}`,
		`{"event":"instructions","group":1,"raw":200,"time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"counted"}`,
		`{"event":"instructions","group":2,"raw":200,"time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"scaled"}`,
		`{"event":"instructions","group":1,"raw":200,"time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"scaled","unit":"ns"}`,
		`{"event":"instructions","group":1,"raw":200,"time_enabled_ns":60,"time_running_ns":30,"value":4.5e2,"status":"scaled"}`,
		`{"event":"instructions","group":1,"raw":200,"time_enabled_ns":60,"time_running_ns":30,"value":null,"status":"scaled"}`,
		`{"event":"instructions","group":1,"raw":null,"time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"scaled"}`,
		`{"event":"instructions","group":1,"raw":2.5,"time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"scaled"}`,
		`{"event":"instructions","group":1,"raw":"200","time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"scaled"}`,
		`{"event":"instructions","group":1,"raw": 200,"time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"scaled"}`,
		`{"event":"instructions","group":1,"raw":200 ,"time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"scaled"}`,
		`{"event":"instructions","group":1,"raw":18446744073709551616,"time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"scaled"}`,
		`{"event":"instructions","group":1,"raw":200,"time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"scaled","raw":7}`,
		`{"event":"instructions","group":1,"time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"scaled"}`,
		`{"event":"instructions","group":1,"raw":200,"time_enabled_ns":60,"time_running_ns":30,"value":400}`,
		`{"raw":200,"event":"instructions","group":1,"time_enabled_ns":60,"time_running_ns":30,"value":400,"status":"scaled"}`,
	}
	for _, sel := range selections[1:] {
		d := NewSelective(sel)
		for _, v := range variants {
			// The second role's counter changes, after a Record with
			// it as the first role's.
			data := []byte(strings.Replace(string(base), counter, counter+"@", 1))
			data = bytes.Replace(data, []byte(counter), []byte(v), 1)
			data = bytes.Replace(data, []byte(counter+"@"), []byte(counter), 1)
			for _, rec := range [][]byte{base, data, data, base} {
				want, wantErr := NewSelective(sel).Parse(rec)
				got, err := d.Parse(rec)
				if (err == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
					t.Fatalf("%+v, after a Record of another shape: read\n%+v, %v\nwant\n%+v, %v\nof %s", sel, got, err, want, wantErr, v)
				}
			}
			// Every counter but the one with a per-op value has its shape
			// kept, for the next Record.
			kept := 0
			for _, s := range d.shapes[:n] {
				if len(s.lit) > 0 {
					kept++
				}
			}
			if kept != n-1 {
				t.Errorf("%+v: %d of %d counters have their shape kept, want all but one", sel, kept, n)
			}
		}
	}
}
