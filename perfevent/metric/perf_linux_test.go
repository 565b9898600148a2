package metric

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/testenv"
)

// needPerf returns the path of perf, the reference the tests compare with
// (see testenv.NeedBinary).
func needPerf(t *testing.T) string {
	t.Helper()
	return testenv.NeedBinary(t, "perf", "linux-perf")
}

// perfRelease is perf's "major.minor" from perf --version ("6.1").
func perfRelease(t *testing.T, perf string) string {
	out, err := exec.Command(perf, "--version").Output()
	if err != nil {
		t.Fatalf("perf --version: %v", err)
	}
	m := regexp.MustCompile(`(\d+)\.(\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("perf --version printed %q", out)
	}
	return m[1] + "." + m[2]
}

func majorMinor(release string) string {
	p := strings.SplitN(release, ".", 3)
	if len(p) < 2 {
		return release
	}
	return p[0] + "." + p[1]
}

// perfMetrics runs PERF_CPUID=cpuid perf list --details metrics and returns
// each metric's expression as perf prints it, by lower-case name.
func perfMetrics(t *testing.T, perf, cpuid string) map[string]string {
	cmd := exec.Command(perf, "list", "--details", "metrics")
	cmd.Env = append(os.Environ(), "PERF_CPUID="+cpuid, "LC_ALL=C", "PAGER=cat")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("PERF_CPUID=%s perf list --details metrics: %v\n%s", cpuid, err, out)
	}
	// "  NAME" then "       [description]" then "       [expression]".
	res := map[string]string{}
	var name string
	var brackets []string
	flush := func() {
		if name != "" && len(brackets) >= 2 {
			res[strings.ToLower(name)] = brackets[len(brackets)-1]
		}
		name, brackets = "", nil
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "       [") && strings.HasSuffix(line, "]"):
			brackets = append(brackets, strings.TrimSuffix(strings.TrimPrefix(line, "       ["), "]"))
		case strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   "):
			flush()
			name = strings.TrimSpace(line)
		default:
			flush()
		}
	}
	flush()
	return res
}

// draw is one set of random inputs: an event's value depends only on its
// lower-case name (perf and perfbench may spell it in other cases).
type draw struct {
	seed     uint64
	literals map[string]float64
}

func (d draw) event(name string) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", d.seed, strings.ToLower(name))
	return 1 + float64(h.Sum64()%1_000_000_007)/1000
}

func draws() []draw {
	var out []draw
	for i := 0; i < 8; i++ {
		out = append(out, draw{seed: uint64(i), literals: map[string]float64{
			"smt_on": float64(i % 2), "core_wide": float64(i / 2 % 2),
			"num_cores": 16, "num_packages": 2, "num_dies": 2, "num_cpus_online": 64,
			"system_tsc_freq": 2.1e9, "slots": 6,
		}})
	}
	return out
}

// The test-only evaluator: it reads perf's printed text directly (escapes,
// pmu@terms@, #literals, if/else, d_ratio, min, max) and resolves names
// against perf's own printed metrics. It shares no code with Parse/Eval.
type perfEval struct {
	metrics map[string]string
	d       draw
	s       string
	i       int
	depth   int
}

func (p *perfEval) eval(name string) (float64, error) {
	src, ok := p.metrics[strings.ToLower(name)]
	if !ok {
		return 0, fmt.Errorf("perf prints no metric %s", name)
	}
	if p.depth > 50 {
		return 0, fmt.Errorf("metrics nest too deep at %s", name)
	}
	q := &perfEval{metrics: p.metrics, d: p.d, s: src, depth: p.depth + 1}
	v, err := q.ifExpr()
	if err == nil && q.skip() < len(q.s) {
		err = fmt.Errorf("trailing %q", q.s[q.i:])
	}
	if err != nil {
		return 0, fmt.Errorf("%s = %s: %w", name, src, err)
	}
	return v, nil
}

func (p *perfEval) skip() int {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
	return p.i
}

func (p *perfEval) word(w string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.i:], w) {
		end := p.i + len(w)
		if end == len(p.s) || !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@", rune(p.s[end])) {
			p.i = end
			return true
		}
	}
	return false
}

func (p *perfEval) punct(c byte) bool {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *perfEval) ifExpr() (float64, error) {
	v, err := p.binary(0)
	if err != nil || !p.word("if") {
		return v, err
	}
	c, err := p.binary(0)
	if err != nil {
		return 0, err
	}
	if !p.word("else") {
		return 0, fmt.Errorf("if without else at %d", p.i)
	}
	e, err := p.ifExpr()
	if c == 0 {
		return e, err
	}
	return v, err
}

var perfLevels = []string{"|", "^", "&", "<>", "+-", "*/%"}

func (p *perfEval) binary(level int) (float64, error) {
	if level == len(perfLevels) {
		return p.unary()
	}
	l, err := p.binary(level + 1)
	for err == nil {
		p.skip()
		if p.i >= len(p.s) || !strings.ContainsRune(perfLevels[level], rune(p.s[p.i])) {
			return l, nil
		}
		c := p.s[p.i]
		p.i++
		var r float64
		if r, err = p.binary(level + 1); err != nil {
			break
		}
		switch c {
		case '|':
			l = bf(l != 0 || r != 0)
		case '^':
			l = bf((l == 0) != (r == 0))
		case '&':
			l = bf(l != 0 && r != 0)
		case '<':
			l = bf(l < r)
		case '>':
			l = bf(l > r)
		case '+':
			l += r
		case '-':
			l -= r
		case '*':
			l *= r
		case '/':
			if r == 0 {
				l = math.NaN()
			} else {
				l /= r
			}
		case '%':
			l = float64(int64(l) % int64(r))
		}
	}
	return 0, err
}

func bf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (p *perfEval) unary() (float64, error) {
	if p.punct('-') {
		v, err := p.unary()
		return -v, err
	}
	return p.primary()
}

func (p *perfEval) args() (a, b float64, err error) {
	if !p.punct('(') {
		return 0, 0, fmt.Errorf("missing ( at %d", p.i)
	}
	if a, err = p.ifExpr(); err != nil {
		return
	}
	if !p.punct(',') {
		return 0, 0, fmt.Errorf("missing , at %d", p.i)
	}
	if b, err = p.ifExpr(); err != nil {
		return
	}
	if !p.punct(')') {
		err = fmt.Errorf("missing ) at %d", p.i)
	}
	return
}

var numRE = regexp.MustCompile(`^([0-9]+\.?[0-9]*|[0-9]*\.?[0-9]+)(e-?[0-9]+)?`)
var symRE = regexp.MustCompile(`^([0-9a-zA-Z_.:@?]|\\[-,=])+`)
var litRE = regexp.MustCompile(`^#[0-9a-zA-Z_.\-]+`)

func (p *perfEval) primary() (float64, error) {
	p.skip()
	rest := p.s[p.i:]
	switch {
	case p.punct('('):
		v, err := p.ifExpr()
		if err == nil && !p.punct(')') {
			err = fmt.Errorf("missing ) at %d", p.i)
		}
		return v, err
	case p.word("d_ratio"):
		a, b, err := p.args()
		if b == 0 {
			return 0, err
		}
		return a / b, err
	case p.word("min"):
		a, b, err := p.args()
		return math.Min(a, b), err
	case p.word("max"):
		a, b, err := p.args()
		return math.Max(a, b), err
	}
	if m := litRE.FindString(rest); m != "" {
		p.i += len(m)
		v, ok := p.d.literals[strings.ToLower(m[1:])]
		if !ok {
			return 0, fmt.Errorf("no value for literal %s", m)
		}
		return v, nil
	}
	num, sym := numRE.FindString(rest), symRE.FindString(rest)
	if num != "" && len(num) >= len(sym) {
		p.i += len(num)
		return strconv.ParseFloat(num, 64)
	}
	if sym == "" {
		return 0, fmt.Errorf("unexpected %q", rest)
	}
	p.i += len(sym)
	name := strings.ReplaceAll(sym, `\`, "")
	if _, ok := p.metrics[strings.ToLower(name)]; ok {
		return p.eval(name)
	}
	return p.d.event(name), nil
}

// TestMetricsMatchPerf evaluates perfbench's definitions and perf's printed
// ones (PERF_CPUID=... perf list --details metrics) on the same random
// event values. For sets taken from the release of the perf installed
// here, every metric must be printed by perf and agree; sets from another
// release are compared by name where perf has the metric, and their
// differences are logged (perf of another release has other tables).
func TestMetricsMatchPerf(t *testing.T) {
	perf := needPerf(t)
	rel := perfRelease(t, perf)
	cases := []struct{ model, cpuid, set string }{
		{"Sapphire Rapids", "GenuineIntel-6-8F-0", "sapphirerapids"},
		{"Ice Lake server", "GenuineIntel-6-6A-0", "icelakex"},
		{"Ice Lake client", "GenuineIntel-6-7E-5", "icelake"},
		{"Tiger Lake", "GenuineIntel-6-8C-1", "tigerlake"},
		{"Cascade Lake server", "GenuineIntel-6-55-7", "cascadelakex"},
		{"Skylake server", "GenuineIntel-6-55-4", "skylakex"},
		{"Skylake client", "GenuineIntel-6-5E-3", "skylake"},
		{"Broadwell server", "GenuineIntel-6-4F-1", "broadwellx"},
		{"Haswell server", "GenuineIntel-6-3F-2", "haswellx"},
		{"Zen 2", "AuthenticAMD-23-31-0", "amdzen2"},
		{"Zen 3", "AuthenticAMD-25-1-0", "amdzen3"},
		{"Zen 4", "AuthenticAMD-25-11-0", "amdzen4"},
		{"Zen 5", "AuthenticAMD-26-2-1", "amdzen5"},
		{"Neoverse N1", "0x00000000410fd0c0", "neoverse-n1"},
		{"Neoverse V1", "0x00000000410fd400", "neoverse-v1"},
		{"Neoverse N2", "0x00000000410fd490", "neoverse-n2-v2"},
	}
	sameRelease := 0
	for _, c := range cases {
		t.Run(c.set, func(t *testing.T) {
			s := Lookup(c.cpuid)
			if s == nil || s.Name != c.set {
				t.Fatalf("Lookup(%s) = %v, want set %s", c.cpuid, s, c.set)
			}
			same := majorMinor(s.Source.Release) == rel
			pm := perfMetrics(t, perf, c.cpuid)
			compared, differ := 0, 0
			for _, m := range s.Metrics {
				if _, ok := pm[strings.ToLower(m.Name)]; !ok {
					if same {
						t.Errorf("%s (%s): perf %s prints no metric %s", c.model, c.cpuid, rel, m.Name)
					}
					continue
				}
				for _, d := range draws() {
					env := Env{Literals: d.literals, CPUID: c.cpuid,
						Event: func(n string) (float64, bool) { return d.event(n), true }}
					got, err := s.Eval(m.Name, env)
					if err != nil {
						t.Fatalf("%s: %v", m.Name, err)
					}
					want, err := (&perfEval{metrics: pm, d: d}).eval(m.Name)
					if err != nil {
						t.Fatalf("perf's %s: %v", m.Name, err)
					}
					if !close(got, want) {
						differ++
						msg := fmt.Sprintf("%s (%s) %s, draw %d: perfbench %.17g, perf %s %.17g\n  perfbench: %s\n  perf:      %s",
							c.model, c.cpuid, m.Name, d.seed, got, rel, want, m.Expr, pm[strings.ToLower(m.Name)])
						if same {
							t.Error(msg)
						} else {
							t.Log(msg)
						}
						break
					}
				}
				compared++
			}
			if same {
				sameRelease++
				t.Logf("%s (%s): %d metrics of %s evaluate equal to perf %s's on %d random draws", c.model, c.cpuid, compared, s.Name, rel, len(draws()))
				if compared != len(s.Metrics) {
					t.Errorf("compared %d of %d metrics", compared, len(s.Metrics))
				}
			} else {
				t.Logf("%s (%s): set from Linux %s, perf is %s: %d metrics perf also prints, %d of them differ; the others are not in perf %s's tables for this CPU",
					c.model, c.cpuid, s.Source.Release, rel, compared, differ, rel)
			}
		})
	}
	if sameRelease > 0 && sameRelease < 6 {
		t.Errorf("only %d CPU models compared with perf %s", sameRelease, rel)
	}
}

// close reports whether a and b agree to a relative 1e-9 (NaN agrees with
// NaN).
func close(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}
