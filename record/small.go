package record

import (
	"bytes"
	"time"
	"unicode/utf8"
)

// The small members of a Record (its identity, window, ops, gauges, OS,
// client, server and provenance) are read by hand on Selective's fast
// path, as encoding/json reads them into their fields, their strings
// interned: a campaign repeats its hosts, versions, steps, commands and
// machines thousands of times. A member that is not exactly as these
// readers expect (a name they do not know or in another case, a name
// given twice, a value of another type, a number out of range, a string
// with escapes) is left, whole, to the general decoder, which decides.

// smallMembers are the members of a Record that small reads (the
// client, a member fast reads apart, aside); their number is their
// index here.
var smallMembers = [...]string{
	"schema", "kind", "outcome", "error", "host", "version", "step", "threads", "repeat", "group",
	"window", "ops", "gauges", "os", "server", "provenance", "metrics", "profile", "aa_of",
}

// notSmall and foldedSmall are what small returns for a member it does
// not read, and for one whose name is that of one it reads in another
// case (encoding/json would take it for that one: fast refuses it).
const (
	notSmall    = -1
	foldedSmall = -2
)

// small decodes the member named key at src[v] into its field of r when
// it is one of smallMembers, and returns that member's number and where
// its value ends; ok false leaves r as it was.
func (d *Selective) small(key, src []byte, v int, r *Record) (n, end int, ok bool) {
	switch string(key) {
	case "schema":
		return intField(0, src, v, &r.Schema)
	case "kind":
		s := string(r.Kind)
		n, end, ok = d.strField(1, src, v, &s)
		r.Kind = Kind(s)
	case "outcome":
		s := string(r.Outcome)
		n, end, ok = d.strField(2, src, v, &s)
		r.Outcome = Outcome(s)
	case "error":
		return d.unique(3, src, v, &r.Error)
	case "host":
		return d.strField(4, src, v, &r.Host)
	case "version":
		return d.strField(5, src, v, &r.Version)
	case "step":
		return d.strField(6, src, v, &r.Step)
	case "threads":
		return intField(7, src, v, &r.Threads)
	case "repeat":
		return intField(8, src, v, &r.Repeat)
	case "group":
		return d.strField(9, src, v, &r.Group)
	default:
		return d.smallObject(key, src, v, r)
	}
	return n, end, ok
}

// smallObject is small for the members that hold objects, and the last
// few strings.
func (d *Selective) smallObject(key, src []byte, v int, r *Record) (n, end int, ok bool) {
	switch string(key) {
	case "window":
		end, ok = d.window(src, v, &r.Window)
		return 10, end, ok
	case "ops":
		end, ok = d.ops(src, v, &r.Ops)
		return 11, end, ok
	case "gauges":
		if !d.sel.Extras {
			return skipped(12, src, v)
		}
		return d.floatMap(12, src, v, &r.Gauges)
	case "os":
		end, ok = d.os(src, v, &r.OS)
		return 13, end, ok
	case "server":
		end, ok = d.server(src, v, &r.Server)
		return 14, end, ok
	case "provenance":
		end, ok = d.provenance(src, v, &r.Provenance)
		return 15, end, ok
	case "metrics":
		return d.floatMap(16, src, v, &r.Metrics)
	case "profile":
		return d.unique(17, src, v, &r.Profile)
	case "aa_of":
		return d.strField(18, src, v, &r.AAOf)
	}
	for _, m := range smallMembers {
		if bytes.EqualFold(key, []byte(m)) {
			return foldedSmall, v, false
		}
	}
	return notSmall, v, false
}

// objectAt reads the object at src[v], or null, with member, which
// reads the value at v of the member named key and returns where it
// ends. null says the value was null.
func objectAt(src []byte, v int, member func(key []byte, v int) (end int, ok bool)) (end int, null, ok bool) {
	end, null, ok = scalarAt(src, v)
	switch {
	case !ok:
		return end, false, false
	case end > v:
		return end, null, null // a scalar: only null is taken
	case src[v] != '{':
		return v, false, false
	}
	end, ok = eachMemberUntil(src, v, member, nil)
	return end, false, ok
}

// skipsAlike reports whether the value at src[v], read member by member
// to end, ends there when skipped whole, as the general way checks it
// does when it leaves out some of its members (pruneAt): members skipped
// as bytes (see skipValue) may end elsewhere in JSON that is not.
func skipsAlike(src []byte, v, end int) bool {
	e, ok := skipValue(src, v)
	return ok && e == end
}

// skipped is a field reader for a member left out (Select.Extras).
func skipped(n int, src []byte, v int) (int, int, bool) {
	end, ok := skipValue(src, v)
	return n, end, ok
}

// provenanceExtras are the members of the provenance that Select.Extras
// reads: all but the machine's host name, CPU model and CPU count.
var provenanceExtras = []string{
	"kernel", "perf_event_paranoid", "nmi_watchdog", "virtualization", "pmus",
	"perfbench", "command", "plan", "plan_sha256", "written", "origin", "placement",
}

// serverMembers are the members of the server, by their numbers in
// Selective.server; Select.Extras reads all but the version, which is
// always read.
var serverMembers = [...]string{
	"pid", "version", "version_comment", "exe", "build_id", "basedir", "datadir", "port", "socket", "config",
	"variables", "uptime_start", "uptime_end",
}

// fieldsAt is objectAt for the object of a struct: field decodes the
// member named key at v into its field and returns that field's number
// (below 64), or -1 for a name it does not know; a name given twice
// fails.
func fieldsAt(src []byte, v int, field func(key []byte, v int) (n, end int, ok bool)) (end int, null, ok bool) {
	var seen uint64
	return objectAt(src, v, func(key []byte, v int) (int, bool) {
		n, end, ok := field(key, v)
		if n < 0 || n >= 64 || seen&(1<<n) != 0 {
			return v, false
		}
		seen |= 1 << n
		return end, ok
	})
}

// The field readers below decode the value at src[v] into *dst as
// encoding/json does (null leaves it as it was), or fail, leaving it; they
// return n, the field's number, for fieldsAt.

func (d *Selective) strField(n int, src []byte, v int, dst *string) (int, int, bool) {
	end, ok := skipValue(src, v)
	s, ok := d.strOK(src[v:end], true, ok)
	if ok && !isNull(src[v:end]) {
		*dst = s
	}
	return n, end, ok
}

// unique is strField for a string most often of one Record only: not
// interned.
func (d *Selective) unique(n int, src []byte, v int, dst *string) (int, int, bool) {
	end, ok := skipValue(src, v)
	s, ok := d.strOK(src[v:end], false, ok)
	if ok && !isNull(src[v:end]) {
		*dst = s
	}
	return n, end, ok
}

func floatField(n int, src []byte, v int, dst *float64) (int, int, bool) {
	x, end, ok := floatAt(src, v)
	if ok && !isNull(src[v:end]) {
		*dst = x
	}
	return n, end, ok
}

func intField(n int, src []byte, v int, dst *int) (int, int, bool) {
	x, end, ok := digitsAt(src, v, 18)
	if ok {
		*dst = int(x)
		return n, end, true
	}
	end, ok = skipValue(src, v)
	i, ok := parseIntOK(src[v:end], ok)
	if ok && !isNull(src[v:end]) {
		*dst = i
	}
	return n, end, ok
}

// intPtrField reads a *int: null makes it nil.
func intPtrField(n int, src []byte, v int, dst **int) (int, int, bool) {
	var x int
	n, end, ok := intField(n, src, v, &x)
	if ok {
		*dst = nil
		if !isNull(src[v:end]) {
			*dst = &x
		}
	}
	return n, end, ok
}

func boolField(n int, src []byte, v int, dst *bool) (int, int, bool) {
	end, ok := skipValue(src, v)
	switch string(src[v:end]) {
	case "true":
		*dst = true
	case "false":
		*dst = false
	case "null":
	default:
		return n, end, false
	}
	return n, end, ok
}

// timeField reads a time as time.Time's UnmarshalJSON does, from a string
// without escapes.
func timeField(n int, src []byte, v int, dst *time.Time) (int, int, bool) {
	end, ok := skipValue(src, v)
	val := src[v:end]
	if !ok || isNull(val) {
		return n, end, ok
	}
	var t time.Time
	if len(val) < 2 || val[0] != '"' || bytes.IndexByte(val, '\\') >= 0 || t.UnmarshalJSON(val) != nil {
		return n, end, false
	}
	*dst = t
	return n, end, true
}

// stringsField reads a list of strings, interned: null makes it nil, []
// an empty list.
func (d *Selective) stringsField(n int, src []byte, v int, dst *[]string) (int, int, bool) {
	end, null, ok := scalarAt(src, v)
	switch {
	case !ok || (end > v && !null):
		return n, end, false
	case null:
		*dst = nil
		return n, end, true
	}
	list := []string{}
	end, ok = eachElementFrom(src, v, func(v int) (int, bool) {
		var s string
		_, end, ok := d.strField(0, src, v, &s)
		list = append(list, s)
		return end, ok
	})
	if ok {
		*dst = list
	}
	return n, end, ok
}

// key returns a member's name (without escapes, see eachMemberUntil) as
// a string, interned, or false for one encoding/json would mend.
func (d *Selective) key(key []byte) (string, bool) {
	ascii := true
	for _, c := range key {
		if c < 0x20 {
			return "", false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	if !ascii && !utf8.Valid(key) {
		return "", false
	}
	if s, ok := d.names[string(key)]; ok {
		return s, true
	}
	s := string(key)
	d.names[s] = s
	return s, true
}

// floatMap and stringMap read a map (null makes it nil); a member of
// null (encoding/json stores a zero) fails.
func (d *Selective) floatMap(n int, src []byte, v int, dst *map[string]float64) (int, int, bool) {
	m := map[string]float64{}
	end, null, ok := objectAt(src, v, func(key []byte, v int) (int, bool) {
		k, ok := d.key(key)
		x, end, xok := floatAt(src, v)
		if !ok || !xok || isNull(src[v:end]) {
			return end, false
		}
		m[k] = x
		return end, true
	})
	if ok {
		*dst = m
		if null {
			*dst = nil
		}
	}
	return n, end, ok
}

func (d *Selective) stringMap(n int, src []byte, v int, dst *map[string]string) (int, int, bool) {
	m := map[string]string{}
	end, null, ok := objectAt(src, v, func(key []byte, v int) (int, bool) {
		k, ok := d.key(key)
		var s string
		_, end, sok := d.strField(0, src, v, &s)
		if !ok || !sok || isNull(src[v:end]) {
			return end, false
		}
		m[k] = s
		return end, true
	})
	if ok {
		*dst = m
		if null {
			*dst = nil
		}
	}
	return n, end, ok
}

func (d *Selective) window(src []byte, v int, dst *Window) (int, bool) {
	var w Window
	end, null, ok := fieldsAt(src, v, func(key []byte, v int) (int, int, bool) {
		switch string(key) {
		case "start":
			return timeField(0, src, v, &w.Start)
		case "end":
			return timeField(1, src, v, &w.End)
		case "seconds":
			return floatField(2, src, v, &w.Seconds)
		case "warmup_seconds":
			return floatField(3, src, v, &w.Warmup)
		case "status_lag_seconds":
			return floatField(4, src, v, &w.StatusLag)
		case "counting":
			return d.strField(5, src, v, &w.Counting)
		}
		return -1, v, false
	})
	if ok && !null {
		*dst = w
	}
	return end, ok
}

func (d *Selective) ops(src []byte, v int, dst *Ops) (int, bool) {
	var o Ops
	end, null, ok := fieldsAt(src, v, func(key []byte, v int) (int, int, bool) {
		switch string(key) {
		case "source":
			return d.strField(0, src, v, &o.Source)
		case "count":
			return floatField(1, src, v, &o.Count)
		case "per":
			return floatField(2, src, v, &o.Per)
		case "counted":
			return boolField(3, src, v, &o.Counted)
		case "estimated":
			return boolField(4, src, v, &o.Estimated)
		}
		return -1, v, false
	})
	if ok && !null {
		*dst = o
	}
	return end, ok
}

// setPtr sets *dst to x when ok: nil when the value was null.
func setPtr[T any](ok, null bool, x *T, dst **T) bool {
	if ok {
		*dst = x
		if null {
			*dst = nil
		}
	}
	return ok
}

func (d *Selective) os(src []byte, v int, dst **OS) (int, bool) {
	o := &OS{}
	end, null, ok := fieldsAt(src, v, func(key []byte, v int) (int, int, bool) {
		switch string(key) {
		case "user_seconds":
			return floatField(0, src, v, &o.UserSeconds)
		case "system_seconds":
			return floatField(1, src, v, &o.SystemSeconds)
		case "voluntary_cs":
			return floatField(2, src, v, &o.VoluntaryCS)
		case "involuntary_cs":
			return floatField(3, src, v, &o.InvoluntaryCS)
		case "read_bytes":
			return floatField(4, src, v, &o.ReadBytes)
		case "write_bytes":
			return floatField(5, src, v, &o.WriteBytes)
		case "rchar":
			return floatField(6, src, v, &o.ReadChars)
		case "wchar":
			return floatField(7, src, v, &o.WriteChars)
		case "syscr":
			return floatField(8, src, v, &o.ReadCalls)
		case "syscw":
			return floatField(9, src, v, &o.WriteCalls)
		case "disk":
			end, ok := d.disk(src, v, &o.Disk)
			return 10, end, ok
		case "rss_bytes":
			return floatField(11, src, v, &o.RSSBytes)
		case "host_cpu_seconds":
			return floatField(12, src, v, &o.HostCPUSeconds)
		}
		return -1, v, false
	})
	return end, setPtr(ok, null, o, dst)
}

func (d *Selective) disk(src []byte, v int, dst **Disk) (int, bool) {
	k := &Disk{}
	end, null, ok := fieldsAt(src, v, func(key []byte, v int) (int, int, bool) {
		switch string(key) {
		case "device":
			return d.strField(0, src, v, &k.Device)
		case "reads":
			return floatField(1, src, v, &k.Reads)
		case "read_sectors":
			return floatField(2, src, v, &k.ReadSectors)
		case "writes":
			return floatField(3, src, v, &k.Writes)
		case "write_sectors":
			return floatField(4, src, v, &k.WriteSectors)
		case "io_ms":
			return floatField(5, src, v, &k.IOTicks)
		}
		return -1, v, false
	})
	return end, setPtr(ok, null, k, dst)
}

// client reads the client but for its per-interval lines and histogram,
// left out unless selected (then the general decoder reads it).
func (d *Selective) client(src []byte, v int, dst **Client) (int, bool) {
	c := &Client{}
	end, null, ok := fieldsAt(src, v, func(key []byte, v int) (int, int, bool) {
		switch string(key) {
		case "tool":
			return d.strField(0, src, v, &c.Tool)
		case "command":
			if !d.sel.Extras {
				return skipped(1, src, v)
			}
			return d.stringsField(1, src, v, &c.Command)
		case "whole_run":
			return boolField(2, src, v, &c.Whole)
		case "started":
			return timeField(3, src, v, &c.Started)
		case "seconds":
			return floatField(4, src, v, &c.Seconds)
		case "queries":
			return floatField(5, src, v, &c.Queries)
		case "reads":
			return floatField(6, src, v, &c.Reads)
		case "writes":
			return floatField(7, src, v, &c.Writes)
		case "other":
			return floatField(8, src, v, &c.Other)
		case "transactions":
			return floatField(9, src, v, &c.Transactions)
		case "events":
			return floatField(10, src, v, &c.Events)
		case "errors":
			return floatField(11, src, v, &c.Errors)
		case "reconnects":
			return floatField(12, src, v, &c.Reconnects)
		case "inserts":
			return floatField(13, src, v, &c.Inserts)
		case "latency_min_ms":
			return floatField(14, src, v, &c.LatencyMin)
		case "latency_avg_ms":
			return floatField(15, src, v, &c.LatencyAvg)
		case "latency_max_ms":
			return floatField(16, src, v, &c.LatencyMax)
		case "latency_p95_ms":
			return floatField(17, src, v, &c.LatencyP95)
		case "percentile":
			return floatField(18, src, v, &c.Percentile)
		case "exit_code":
			return intField(19, src, v, &c.ExitCode)
		case "intervals", "histogram":
			if d.sel.ClientLists {
				return -1, v, false
			}
			end, ok := skipValue(src, v)
			if key[0] == 'i' {
				return 20, end, ok
			}
			return 21, end, ok
		}
		return -1, v, false
	})
	return end, setPtr(ok && skipsAlike(src, v, end), null, c, dst)
}

func (d *Selective) server(src []byte, v int, dst **Server) (int, bool) {
	s := &Server{}
	end, null, ok := fieldsAt(src, v, func(key []byte, v int) (int, int, bool) {
		if !d.sel.Extras && string(key) != "version" {
			for i, m := range serverMembers {
				if string(key) == m {
					return skipped(i, src, v)
				}
			}
			return -1, v, false
		}
		switch string(key) {
		case "pid":
			return intField(0, src, v, &s.Pid)
		case "version":
			return d.strField(1, src, v, &s.Version)
		case "version_comment":
			return d.strField(2, src, v, &s.VersionComment)
		case "exe":
			return d.strField(3, src, v, &s.Exe)
		case "build_id":
			return d.strField(4, src, v, &s.BuildID)
		case "basedir":
			return d.strField(5, src, v, &s.Basedir)
		case "datadir":
			return d.strField(6, src, v, &s.Datadir)
		case "port":
			return intField(7, src, v, &s.Port)
		case "socket":
			return d.strField(8, src, v, &s.Socket)
		case "config":
			return d.strField(9, src, v, &s.Config)
		case "variables":
			return d.stringMap(10, src, v, &s.Variables)
		case "uptime_start":
			return floatField(11, src, v, &s.UptimeStart)
		case "uptime_end":
			return floatField(12, src, v, &s.UptimeEnd)
		case "engine":
			return d.strField(13, src, v, &s.Engine)
		}
		return -1, v, false
	})
	ok = ok && (d.sel.Extras || skipsAlike(src, v, end))
	return end, setPtr(ok, null, s, dst)
}

func (d *Selective) provenance(src []byte, v int, dst *Provenance) (int, bool) {
	var p Provenance
	end, null, ok := fieldsAt(src, v, func(key []byte, v int) (int, int, bool) {
		if !d.sel.Extras {
			for i, m := range provenanceExtras {
				if string(key) == m {
					return skipped(16+i, src, v)
				}
			}
		}
		switch string(key) {
		case "hostname":
			return d.strField(0, src, v, &p.Hostname)
		case "cpu_model":
			return d.strField(1, src, v, &p.CPUModel)
		case "cpus":
			return intField(2, src, v, &p.CPUs)
		case "kernel":
			return d.strField(3, src, v, &p.Kernel)
		case "perf_event_paranoid":
			return intPtrField(4, src, v, &p.PerfEventParanoid)
		case "nmi_watchdog":
			return intPtrField(5, src, v, &p.NMIWatchdog)
		case "virtualization":
			return d.strField(6, src, v, &p.Virtualization)
		case "pmus":
			return d.stringsField(7, src, v, &p.PMUs)
		case "perfbench":
			return d.strField(8, src, v, &p.Perfbench)
		case "command":
			return d.stringsField(9, src, v, &p.Command)
		case "plan":
			return d.strField(10, src, v, &p.Plan)
		case "plan_sha256":
			return d.strField(11, src, v, &p.PlanSHA256)
		case "written":
			return timeField(12, src, v, &p.Written)
		case "origin":
			return d.stringMap(13, src, v, &p.Origin)
		case "placement":
			end, ok := d.placement(src, v, &p.Placement)
			return 14, end, ok
		}
		return -1, v, false
	})
	ok = ok && skipsAlike(src, v, end)
	if ok && !null {
		*dst = p
	}
	return end, ok
}

func (d *Selective) placement(src []byte, v int, dst **Placement) (int, bool) {
	p := &Placement{}
	end, null, ok := fieldsAt(src, v, func(key []byte, v int) (int, int, bool) {
		switch string(key) {
		case "mode":
			return d.strField(0, src, v, &p.Mode)
		case "server_cpus":
			return d.strField(1, src, v, &p.Server)
		case "client_cpus":
			return d.strField(2, src, v, &p.Client)
		case "server_allowed":
			return d.strField(3, src, v, &p.ServerAllowed)
		case "client_allowed":
			return d.strField(4, src, v, &p.ClientAllowed)
		case "server_threads_elsewhere":
			return intField(5, src, v, &p.ServerThreadsElsewhere)
		}
		return -1, v, false
	})
	return end, setPtr(ok, null, p, dst)
}
