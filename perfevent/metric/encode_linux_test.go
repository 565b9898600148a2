package metric

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/testenv"
	"github.com/perfbench/perfbench/perfevent"
)

// fakeCorePMU writes a sysfs root whose only PMU is a core PMU "cpu" with
// the format/ bits of the perfevent fixture named (Intel: cpu_core of the
// hybrid fixture, plus the any bit older cores have; AMD: the Zen fixture).
func fakeCorePMU(t *testing.T, intel bool) string {
	root := t.TempDir()
	dev := filepath.Join(root, "sys/bus/event_source/devices/cpu")
	if err := os.MkdirAll(filepath.Join(dev, "format"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "../testdata/amd-zen/sys/bus/event_source/devices/cpu/format"
	if intel {
		src = "../testdata/intel-hybrid/sys/bus/event_source/devices/cpu_core/format"
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"type": "4\n"}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files["format/"+e.Name()] = string(b)
	}
	if intel {
		files["format/any"] = "config:21\n"
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dev, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// perfEncodings has perf encode each event for cpuid with the fake sysfs
// mounted over /sys/bus/event_source/devices in a private mount namespace:
// perf stat -vv prints the perf_event_attr it built before the open fails.
func perfEncodings(t *testing.T, perf, root, cpuid string, names []string) map[string][3]uint64 {
	t.Helper()
	testenv.NeedRoot(t, "a private mount namespace (unshare -m)")
	unshare := testenv.NeedBinary(t, "unshare", "util-linux")
	script := `mount --bind "$1" /sys/bus/event_source/devices || exit 1; perf=$2; shift 2
for e; do echo "=== $e"; "$perf" stat -vv -e "$e" -- true 2>&1; done`
	args := append([]string{"-m", "sh", "-c", script, "sh", filepath.Join(root, "sys/bus/event_source/devices"), perf}, names...)
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), "PERF_CPUID="+cpuid, "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bind-mount a fake sysfs in a private mount namespace (unshare -m): %v: %s", err, strings.TrimSpace(string(out)))
	}
	res := map[string][3]uint64{}
	var cur string
	var words [3]uint64
	inDump, done := false, true
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "=== "):
			cur, done = strings.TrimPrefix(line, "=== "), false
		case line == "perf_event_attr:" && !done:
			inDump, words = true, [3]uint64{}
		case inDump && strings.HasPrefix(line, "----"):
			inDump, done = false, true
			res[cur] = words
		case inDump:
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			key := strings.Join(f[:len(f)-1], " ")
			v, err := strconv.ParseUint(f[len(f)-1], 0, 64)
			if err != nil {
				continue
			}
			switch key {
			case "type":
				words[0] = v
			case "config":
				words[1] = v
			case "{ bp_addr, config1 }":
				words[2] = v
			}
		}
	}
	return res
}

// TestEncodingsMatchPerf checks the encodings generated from the event
// JSON against perf's own (same release) for the model-specific events of
// every x86 set: perf and perfevent both encode with the same fake core
// PMU's format/ bits. topdown-* and slots are the kernel's sysfs aliases
// on a real machine and are left out; so are the generic events.
func TestEncodingsMatchPerf(t *testing.T) {
	perf := needPerf(t)
	rel := perfRelease(t, perf)
	cpuids := map[string]string{
		"sapphirerapids": "GenuineIntel-6-8F-0", "icelakex": "GenuineIntel-6-6A-0", "icelake": "GenuineIntel-6-7E-5",
		"tigerlake": "GenuineIntel-6-8C-1", "cascadelakex": "GenuineIntel-6-55-7", "skylakex": "GenuineIntel-6-55-4",
		"skylake": "GenuineIntel-6-5E-3", "broadwellx": "GenuineIntel-6-4F-1", "haswellx": "GenuineIntel-6-3F-2",
		"amdzen2": "AuthenticAMD-23-31-0", "amdzen3": "AuthenticAMD-25-1-0",
	}
	checked := 0
	for _, s := range Sets() {
		cpuid, ok := cpuids[s.Name]
		if !ok || majorMinor(s.Source.Release) != rel {
			continue
		}
		intel := strings.HasPrefix(cpuid, "GenuineIntel")
		root := fakeCorePMU(t, intel)
		sys, err := perfevent.LoadSystem(root)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range s.Events {
			if strings.HasPrefix(e.Spelling, "cpu/") && !strings.HasPrefix(e.Name, "topdown-") {
				names = append(names, strings.ReplaceAll(e.Name, "@", "/"))
			}
		}
		got := perfEncodings(t, perf, root, cpuid, names)
		for _, e := range s.Events {
			name := strings.ReplaceAll(e.Name, "@", "/")
			want, ok := got[name]
			if !ok {
				continue
			}
			l, err := perfevent.Parse(e.Spelling, sys)
			if err != nil {
				t.Errorf("%s: %s (%s): %v", s.Name, e.Name, e.Spelling, err)
				continue
			}
			enc := l.Events[0].Encodings[0]
			if have := [3]uint64{uint64(enc.Type), enc.Config, enc.Config1}; have != want {
				t.Errorf("%s: %s spelled %s encodes as type %d config %#x config1 %#x; perf %s: type %d config %#x config1 %#x",
					s.Name, e.Name, e.Spelling, have[0], have[1], have[2], rel, want[0], want[1], want[2])
				continue
			}
			checked++
		}
		if n := len(got); n != len(names) {
			t.Errorf("%s: perf encoded %d of the %d model events", s.Name, n, len(names))
		}
	}
	t.Logf("%d event encodings equal to perf %s's", checked, rel)
	if checked == 0 {
		t.Error("no encoding compared")
	}
}
