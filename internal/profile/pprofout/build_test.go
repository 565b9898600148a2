package pprofout

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/perfbench/perfbench/internal/profile/symbols"
	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/perfevent"
	"github.com/perfbench/perfbench/record"
	"github.com/spf13/pflag"
)

// goTool runs `go tool pprof ARGS` and returns its stdout; the test fails
// when pprof does.
func pprofTool(t *testing.T, args ...string) string {
	t.Helper()
	goBin := testenv.NeedBinary(t, "go", "golang-go")
	cmd := exec.Command(goBin, append([]string{"tool", "pprof"}, args...)...)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go tool pprof %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// topRow is one row of pprof -top: flat and cum values by function.
type topRow struct{ flat, cum float64 }

var topLine = regexp.MustCompile(`^\s*(-?[\d.]+)[a-z]*\s+\S+\s+\S+\s+(-?[\d.]+)[a-z]*\s+\S+\s+(.+)$`)

// parseTop reads the rows of pprof -top output, values without their unit.
func parseTop(t *testing.T, out string) map[string]topRow {
	t.Helper()
	rows := map[string]topRow{}
	for _, line := range strings.Split(out, "\n") {
		m := topLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		flat, err1 := strconv.ParseFloat(m[1], 64)
		cum, err2 := strconv.ParseFloat(m[2], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		rows[strings.TrimSpace(m[3])] = topRow{flat, cum}
	}
	if len(rows) == 0 {
		t.Fatalf("no rows in pprof output:\n%s", out)
	}
	return rows
}

const testProgram = `
static int __attribute__((noinline)) hidden_fn(int x) { return x * 3 + 1; }
int __attribute__((noinline)) exported_fn(int x) { return hidden_fn(x) + 2; }
int main(void) { return exported_fn(1) == 0; }
`

// fixture is a root directory holding a built program at /prog and a
// kallsyms, with a memory map of the program as the loader would lay it
// out at base, and the program's function addresses in that map.
type fixture struct {
	root  string
	maps  []byte
	funcs map[string]uint64 // process addresses of function starts
}

const fixtureBase = 0x555555554000

func newFixture(t *testing.T) *fixture {
	t.Helper()
	gcc := testenv.NeedBinary(t, "gcc", "gcc")
	root := t.TempDir()
	src := filepath.Join(root, "prog.c")
	if err := os.WriteFile(src, []byte(testProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "prog")
	if out, err := exec.Command(gcc, "-O0", "-Wl,--build-id", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	f := &fixture{root: root, funcs: map[string]uint64{}}
	// Lay the PT_LOAD segments out as the kernel maps a PIE at base.
	var maps strings.Builder
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		start := fixtureBase + p.Vaddr&^0xfff
		end := (fixtureBase + p.Vaddr + p.Memsz + 0xfff) &^ 0xfff
		perms := []byte("---p")
		if p.Flags&elf.PF_R != 0 {
			perms[0] = 'r'
		}
		if p.Flags&elf.PF_W != 0 {
			perms[1] = 'w'
		}
		if p.Flags&elf.PF_X != 0 {
			perms[2] = 'x'
		}
		fmt.Fprintf(&maps, "%x-%x %s %08x 08:01 1234 /prog\n", start, end, perms, p.Off&^0xfff)
	}
	maps.WriteString("7ffd5e1f0000-7ffd5e1f2000 r-xp 00000000 00:00 0 [vdso]\n")
	f.maps = []byte(maps.String())
	syms, err := ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		switch s.Name {
		case "hidden_fn", "exported_fn", "main":
			if s.Size < 10 {
				t.Fatalf("%s is only %d bytes", s.Name, s.Size)
			}
			f.funcs[s.Name] = fixtureBase + s.Value
		}
	}
	kallsyms := "ffffffff81000000 T _text\nffffffff81100000 T entry_SYSCALL_64\nffffffff81200000 t tcp_sendmsg\nffffffff81300000 D data\n"
	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proc/kallsyms"), []byte(kallsyms), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// set returns a sample set of the fixture program: hidden samples in
// hidden_fn (tid 11), one in the kernel under exported_fn (tid 12), one in
// the vdso and one at an unmapped address.
func (f *fixture) set(hidden int) *perfevent.SampleSet {
	h, e, m := f.funcs["hidden_fn"], f.funcs["exported_fn"], f.funcs["main"]
	s := &perfevent.SampleSet{
		Pid: 4242, Event: "cpu-clock", Unit: "ns", Freq: 99, CPUs: 2,
		Start: time.Unix(1700000000, 0), End: time.Unix(1700000002, 0),
		Comms: map[int]string{11: "conn", 12: "worker"}, Exe: "/prog", MapsStart: f.maps,
		Warnings: []string{"3 records lost because a ring buffer was full"},
	}
	// Repeats of a stack are merged by the sampler (Count).
	s.Samples = append(s.Samples, perfevent.Sample{Tid: 11, Count: hidden, Period: uint64(hidden) * 1_000_000, IP: h + 1, User: []uint64{h + 1, e + 5, m + 5}})
	s.Samples = append(s.Samples,
		perfevent.Sample{Tid: 12, Period: 2_000_000, IP: 0xffffffff81200010,
			Kernel: []uint64{0xffffffff81200010, 0xffffffff81100020}, User: []uint64{e + 5, m + 5}},
		perfevent.Sample{Tid: 11, Period: 1_000_000, IP: 0x7ffd5e1f0100, User: []uint64{0x7ffd5e1f0100}},
		perfevent.Sample{Tid: 11, Period: 1_000_000, IP: 0x1234, User: []uint64{0x1234}},
	)
	return s
}

func TestBuildFixture(t *testing.T) {
	f := newFixture(t)
	res := symbols.NewResolver(f.root)
	p, err := build(f.set(3), Options{Roles: map[int]string{11: "connection"}, Ops: 2000, OpsSource: "Questions",
		Version: "10.11.6", Step: "point-query", Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{Samples: 6, Kernel: 1, KernelNamed: 1, Exe: 3, ExeNamed: 3, Unknown: 2, ExeStack: 4, ExeStackNamed: 4}
	if p.Stats != want {
		t.Errorf("stats %+v, want %+v", p.Stats, want)
	}
	pr := p.P
	if got := fmt.Sprint(pr.SampleType[0].Type, "/", pr.SampleType[0].Unit, " ", pr.SampleType[1].Type, "/",
		pr.SampleType[1].Unit); got != "samples/count cpu/nanoseconds" {
		t.Errorf("sample types %s", got)
	}
	if pr.DefaultSampleType != "cpu" || pr.Period != 1_000_000_000/99 || pr.DurationNanos != 2e9 {
		t.Errorf("default %q, period %d, duration %d", pr.DefaultSampleType, pr.Period, pr.DurationNanos)
	}
	if pr.Mapping[0].File != "/prog" || pr.Mapping[len(pr.Mapping)-1].File != "[kernel.kallsyms]" {
		t.Errorf("mappings: first %s, last %s", pr.Mapping[0].File, pr.Mapping[len(pr.Mapping)-1].File)
	}
	if id := gnuBuildID(t, filepath.Join(f.root, "prog")); pr.Mapping[0].BuildID == "" || pr.Mapping[0].BuildID != id {
		t.Errorf("mapping build-id %q, file %q", pr.Mapping[0].BuildID, id)
	}
	// Labels: role from the map, unattributed for tid 12; comm; tid.
	roles := map[string]int64{}
	for _, s := range pr.Sample {
		roles[s.Label["role"][0]] += s.Value[0]
		if s.NumLabel["tid"][0] == 12 && (s.Label["role"][0] != unattributedRole || s.Label["comm"][0] != "worker") {
			t.Errorf("tid 12 labelled %v", s.Label)
		}
	}
	if roles["connection"] != 5 || roles[unattributedRole] != 1 {
		t.Errorf("samples by role %v", roles)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "records lost") {
		t.Errorf("warnings %q", p.Warnings)
	}

	// Written, read back: the metadata survives.
	path := filepath.Join(t.TempDir(), "a", defaultFileName)
	if err := p.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	back, err := profile.Parse(fh)
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	meta := ReadMeta(back)
	if meta.Ops != 2000 || meta.OpsSource != "Questions" || meta.Version != "10.11.6" || meta.Step != "point-query" ||
		meta.Event != "cpu-clock" || len(meta.Warnings) != 1 {
		t.Errorf("meta %+v", meta)
	}

	// pprof -top, in samples: hand-counted from the set.
	rows := parseTop(t, pprofTool(t, "-top", "-symbolize=none", "-sample_index=samples", path))
	for name, want := range map[string]topRow{
		"hidden_fn":        {3, 3},
		"exported_fn":      {0, 4},
		"main":             {0, 4},
		"tcp_sendmsg":      {1, 1},
		"entry_SYSCALL_64": {0, 1},
		"[vdso]":           {1, 1},
		"[unknown]":        {1, 1},
	} {
		if got, ok := rows[name]; !ok || got != want {
			t.Errorf("pprof -top %s: %+v (listed %v), want %+v", name, got, ok, want)
		}
	}
	// In the event's unit: hidden_fn is 3 ms of the 7 ms.
	rows = parseTop(t, pprofTool(t, "-top", "-symbolize=none", "-unit=ms", path))
	if got := rows["hidden_fn"]; got.flat != 3 || rows["tcp_sendmsg"].flat != 2 {
		t.Errorf("pprof -top -unit=ms: hidden_fn %+v, tcp_sendmsg %+v", got, rows["tcp_sendmsg"])
	}
	// Role labels filter.
	rows = parseTop(t, pprofTool(t, "-top", "-symbolize=none", "-sample_index=samples", "-tagfocus=role=connection", path))
	if _, ok := rows["tcp_sendmsg"]; ok || rows["hidden_fn"].flat != 3 {
		t.Errorf("-tagfocus=role=connection kept %v", rows)
	}

	// -diff_base against a profile with 1 sample in hidden_fn.
	base, err := build(f.set(1), Options{Resolver: res, Ops: 1000})
	if err != nil {
		t.Fatal(err)
	}
	basePath := filepath.Join(t.TempDir(), "base.pb.gz")
	if err := base.WriteFile(basePath); err != nil {
		t.Fatal(err)
	}
	rows = parseTop(t, pprofTool(t, "-top", "-symbolize=none", "-sample_index=samples", "-diff_base="+basePath, path))
	if rows["hidden_fn"].flat != 2 || rows["main"].cum != 2 {
		t.Errorf("diff: hidden_fn %+v main %+v, want flat +2, cum +2", rows["hidden_fn"], rows["main"])
	}
}

// TestBuildNoMaps: without a memory map, user frames are unknown and a
// warning says so; kernel frames are still named.
func TestBuildNoMaps(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "proc"), 0o755)
	os.WriteFile(filepath.Join(root, "proc/kallsyms"), []byte("0000000000000000 T _text\n"), 0o644)
	set := &perfevent.SampleSet{Pid: 7, Event: "cycles", Samples: []perfevent.Sample{
		{Tid: 7, Period: 100, Kernel: []uint64{0xffffffff81000010}, User: []uint64{0x400000}},
	}}
	p, err := build(set, Options{Resolver: symbols.NewResolver(root)})
	if err != nil {
		t.Fatal(err)
	}
	if p.P.SampleType[1].Type != "cycles" || p.P.SampleType[1].Unit != "count" {
		t.Errorf("sample type %v", p.P.SampleType[1])
	}
	w := strings.Join(p.Warnings, "\n")
	if !strings.Contains(w, "no memory map of pid 7") || !strings.Contains(w, "kernel symbol addresses are hidden") {
		t.Errorf("warnings %q", w)
	}
	if p.Stats.Kernel != 1 || p.Stats.KernelNamed != 0 {
		t.Errorf("stats %+v", p.Stats)
	}
	if _, err := build(nil, Options{}); err == nil {
		t.Error("nil set accepted")
	}
}

func TestRelPathAndFlags(t *testing.T) {
	rel, err := RelPath("/runs/a/rec.json", "/runs/a/profiles/p.pb.gz")
	if err != nil || rel != "profiles/p.pb.gz" {
		t.Errorf("RelPath = %q, %v", rel, err)
	}
	var f Flags
	if f.Enabled() || f.Validate() != nil {
		t.Error("zero flags")
	}
	f.Out = "x"
	if f.Validate() == nil {
		t.Error("--profile-out without --profile accepted")
	}
	f = Flags{Freq: 99}
	if f.Path("/runs/a/rec.json") != "/runs/a/"+defaultFileName || f.Path("") != defaultFileName {
		t.Errorf("paths %q %q", f.Path("/runs/a/rec.json"), f.Path(""))
	}
	o, err := f.SampleOptions(nil)
	if err != nil || o.Freq != 99 {
		t.Errorf("options %+v %v", o, err)
	}
	for _, c := range []struct {
		args []string
		freq int
	}{{nil, 0}, {[]string{"--profile"}, perfevent.DefaultSampleFreq}, {[]string{"--profile=999", "--profile-out", "p.pb.gz"}, 999}} {
		var fl Flags
		fs := pflag.NewFlagSet("stat", pflag.ContinueOnError)
		fl.AddFlags(fs)
		if err := fs.Parse(c.args); err != nil || fl.Freq != c.freq || fl.Validate() != nil {
			t.Errorf("%v: freq %d, %v %v", c.args, fl.Freq, err, fl.Validate())
		}
	}
	// An event needs the catalogue, and one event only.
	if _, err := (&Flags{Freq: 99, Event: "cpu-clock"}).SampleOptions(nil); err == nil || err.Error() != "--profile-event: "+
		"cpu-clock: no event catalogue to resolve it" {
		t.Errorf("an event without a catalogue: %v", err)
	}
	sys := &perfevent.System{}
	if o, err := SampleOptions(999, "task-clock", sys); err != nil || o.Freq != 999 || o.Event.Name != "task-clock" {
		t.Errorf("task-clock at 999 Hz: %+v, %v", o, err)
	}
	if _, err := SampleOptions(99, "task-clock,cpu-clock", sys); err == nil || err.Error() != "task-clock,cpu-clock names 2 events: sample one" {
		t.Errorf("two events: %v", err)
	}
	r := &record.Record{Version: "v1", Step: "s", Ops: record.Ops{Source: "Questions", Count: 12}}
	if ro := recordOptions(r, map[int]string{1: "main"}, nil); ro.Ops != 12 || ro.OpsSource != "Questions" ||
		ro.Version != "v1" || ro.Step != "s" || ro.Roles[1] != "main" {
		t.Errorf("record options %+v", ro)
	}
}

// TestCommSamples: samples counted by thread name, most first; threads of one
// name add up; a thread whose name was not read counts under "".
func TestCommSamples(t *testing.T) {
	set := &perfevent.SampleSet{
		Comms: map[int]string{1: "mysqld", 2: "connection", 3: "connection"},
		Samples: []perfevent.Sample{
			{Tid: 1, Count: 2}, {Tid: 2, Count: 3}, {Tid: 3}, {Tid: 3, Count: 1}, {Tid: 4, Count: 2},
		},
	}
	want := []CommSamples{{"connection", 5}, {"", 2}, {"mysqld", 2}}
	if got := commSamples(set); !reflect.DeepEqual(got, want) {
		t.Errorf("commSamples = %+v, want %+v", got, want)
	}
}

// TestBuildKernelSampleUserIP: the user frame of a sample taken in the
// kernel is where user code entered the kernel: after a system call, the
// next instruction; on a page fault or an interrupt, the faulting or
// interrupted instruction itself, which can be a function's first. It is
// named from its own address, not from the byte before it (which is the
// previous function's), as return addresses above it are.
func TestBuildKernelSampleUserIP(t *testing.T) {
	f := newFixture(t)
	e, m := f.funcs["exported_fn"], f.funcs["main"]
	set := &perfevent.SampleSet{Pid: 4242, Event: "cpu-clock", Unit: "ns", Exe: "/prog", MapsStart: f.maps, Samples: []perfevent.Sample{
		// A page fault on exported_fn's first instruction.
		{Tid: 11, Period: 1000, IP: 0xffffffff81200010, Kernel: []uint64{0xffffffff81200010}, User: []uint64{e, m + 5}},
	}}
	p, err := build(set, Options{Resolver: symbols.NewResolver(f.root)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range p.P.Sample[0].Location {
		for _, ln := range l.Line {
			names = append(names, ln.Function.Name)
		}
	}
	if want := []string{"tcp_sendmsg", "exported_fn", "main"}; !reflect.DeepEqual(names, want) {
		t.Errorf("frames %q, want %q", names, want)
	}
}

// gnuBuildID is the build-id of the ELF file at path, read from its
// .note.gnu.build-id section (namesz, descsz, type, "GNU\0", the id).
func gnuBuildID(t *testing.T, path string) string {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".note.gnu.build-id")
	if sec == nil {
		t.Fatalf("%s has no .note.gnu.build-id", path)
	}
	b, err := sec.Data()
	if err != nil || len(b) < 16 {
		t.Fatalf("%s: build-id note of %d bytes: %v", path, len(b), err)
	}
	namesz, descsz := f.ByteOrder.Uint32(b[0:]), f.ByteOrder.Uint32(b[4:])
	start := 12 + (namesz+3)&^3
	if int(start+descsz) > len(b) {
		t.Fatalf("%s: build-id note of %d bytes, name %d desc %d", path, len(b), namesz, descsz)
	}
	return fmt.Sprintf("%x", b[start:start+descsz])
}
