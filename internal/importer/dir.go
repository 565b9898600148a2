package importer

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/perfbench/perfbench/internal/load/sysbench"
	"github.com/perfbench/perfbench/record"
)

// DefaultPattern is the naming scheme of the legacy scripts' result files,
// matched against a file's base name.
const DefaultPattern = `^(?P<prefix>sb\.perf\.hw|sb\.o)\.(?P<step>.+)\.range(?P<range>\d+)\.pk(?P<pk>\d+)(?:\.(?P<sample>\d+))?$`

// Prefixes of DefaultPattern.
const (
	PerfPrefix     = "sb.perf.hw"
	SysbenchPrefix = "sb.o"
)

// Naming maps file paths to versions, steps and samples.
type Naming struct {
	re *regexp.Regexp
	// PerfPrefix and SysbenchPrefix are the values of the "prefix" group
	// that mark perf stat and sysbench output.
	PerfPrefix, SysbenchPrefix string
}

// defaultNaming is the legacy scripts' scheme (DefaultPattern).
func defaultNaming() *Naming {
	n, _ := NewNaming(DefaultPattern)
	return n
}

// errBadPattern is returned for a naming pattern without a "step" group.
var errBadPattern = errors.New(`naming pattern needs a named group "step", as in (?P<step>[a-z-]+)`)

// NewNaming compiles a naming pattern (see the package comment).
func NewNaming(pattern string) (*Naming, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("compile naming pattern %q: %w", pattern, err)
	}
	if re.SubexpIndex("step") < 0 {
		return nil, errBadPattern
	}
	return &Naming{re: re, PerfPrefix: PerfPrefix, SysbenchPrefix: SysbenchPrefix}, nil
}

type named struct {
	path, version, step, prefix, pk string
	sample                          int
	hasSample                       bool
}

// match applies the pattern to rel, or else to its base name; version is
// the version when the pattern has no "version" group.
func (n *Naming) match(rel, version string) (named, bool) {
	m := n.re.FindStringSubmatch(filepath.ToSlash(rel))
	if m == nil {
		m = n.re.FindStringSubmatch(filepath.Base(rel))
	}
	if m == nil {
		return named{}, false
	}
	g := func(name string) string {
		if i := n.re.SubexpIndex(name); i >= 0 {
			return m[i]
		}
		return ""
	}
	out := named{path: rel, step: g("step"), prefix: g("prefix"), pk: g("pk"), version: g("version")}
	if out.step == "" {
		return named{}, false
	}
	if r := g("range"); r != "" {
		out.step += "_range=" + r
	}
	if s := g("sample"); s != "" {
		if v, err := strconv.Atoi(s); err == nil {
			out.sample, out.hasSample = v, true
		}
	}
	if out.version == "" {
		out.version = version
	}
	return out, out.version != "" && out.version != "." && out.version != "/"
}

// DirOptions controls Dir.
type DirOptions struct {
	Options
	// Naming maps paths (nil: defaultNaming).
	Naming *Naming
}

// Dir imports a results folder (see the package comment). Files that match
// no naming are skipped with a warning.
func Dir(root string, opts DirOptions) *Result {
	res := newResult(opts.Options)
	naming := opts.Naming
	if naming == nil {
		naming = defaultNaming()
	}
	w := &dirWalk{root: root, naming: naming, res: res, steps: map[[2]string]*dirStep{}}
	if err := filepath.WalkDir(root, w.visit); err != nil {
		res.fail(fmt.Errorf("read results folder %s: %w", root, err))
	}
	for _, s := range w.sorted() {
		s.importTo(opts.Options, res)
	}
	warnNoThreads(res)
	return res
}

// dirStep is the files of a version's step in a results folder.
type dirStep struct {
	version, step string
	perf, sb      []named
}

// dirWalk gathers the files of a results folder by version and step.
type dirWalk struct {
	root   string
	naming *Naming
	res    *Result
	steps  map[[2]string]*dirStep
}

// visit is the fs.WalkDirFunc of Dir.
func (w *dirWalk) visit(path string, d fs.DirEntry, err error) error {
	if err != nil {
		w.res.fail(fmt.Errorf("read results folder: %w", err))
		return nil
	}
	if d.IsDir() {
		if path != w.root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		return nil
	}
	if strings.HasPrefix(d.Name(), ".") || strings.HasSuffix(d.Name(), ".json") {
		return nil
	}
	rel, _ := filepath.Rel(w.root, path)
	first := ""
	if i := strings.IndexByte(filepath.ToSlash(rel), '/'); i > 0 {
		first = filepath.ToSlash(rel)[:i]
	}
	n, ok := w.naming.match(rel, first)
	if !ok {
		w.res.warn("%s: name matches no naming scheme (see --pattern); skipped", path)
		return nil
	}
	n.path = path
	w.add(n)
	return nil
}

// add files n under its step, as perf output or sysbench output: by its
// prefix, else by its first lines.
func (w *dirWalk) add(n named) {
	isPerf, isSB := false, false
	switch n.prefix {
	case w.naming.PerfPrefix:
		isPerf = n.prefix != ""
	case w.naming.SysbenchPrefix:
		isSB = n.prefix != ""
	}
	if !isPerf && !isSB {
		isSB = looksSysbench(n.path)
		isPerf = !isSB
	}
	k := [2]string{n.version, n.step}
	s := w.steps[k]
	if s == nil {
		s = &dirStep{version: n.version, step: n.step}
		w.steps[k] = s
	}
	if isPerf {
		s.perf = append(s.perf, n)
	} else {
		s.sb = append(s.sb, n)
	}
}

// sorted is the steps by version and step, each one's files by sample.
func (w *dirWalk) sorted() []*dirStep {
	var keys [][2]string
	for k := range w.steps {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	bySample := func(ns []named) {
		sort.SliceStable(ns, func(i, j int) bool {
			if ns[i].sample != ns[j].sample {
				return ns[i].sample < ns[j].sample
			}
			return ns[i].path < ns[j].path
		})
	}
	out := make([]*dirStep, 0, len(keys))
	for _, k := range keys {
		s := w.steps[k]
		bySample(s.perf)
		bySample(s.sb)
		out = append(out, s)
	}
	return out
}

// importTo imports the step's files into res: its perf outputs, with the
// op counts of its first sysbench output, or its sysbench outputs alone.
func (s *dirStep) importTo(o Options, res *Result) {
	o.Version, o.Step = s.version, s.step
	if len(s.perf) == 0 {
		var files []string
		for _, n := range s.sb {
			files = append(files, n.path)
		}
		sysbenchFiles(files, o, res)
		return
	}
	var sb *sysbench.Result
	if len(s.sb) > 0 {
		o.Sysbench = s.sb[0].path
		if len(s.sb) > 1 {
			res.warn("%s: %d sysbench outputs for %s %s; the first gives the op counts", s.sb[1].path, len(s.sb), s.version, s.step)
		}
		sb = readSysbench(o.Sysbench, res)
		if sb == nil {
			o.Sysbench = ""
		}
	}
	var files []string
	for _, n := range s.perf {
		files = append(files, n.path)
	}
	pk := s.perf[0].pk
	importRuns(files, sb, o, res, func(r *record.Record) {
		if pk != "" {
			r.Provenance.Origin["file.pk"] = pk
		}
		res.emit(r)
	})
}

// looksSysbench reports whether a file starts like sysbench output.
func looksSysbench(path string) bool {
	f, err := openFile(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for i := 0; i < 20 && sc.Scan(); i++ {
		t := sc.Text()
		if strings.HasPrefix(t, "sysbench ") || strings.HasPrefix(t, "SQL statistics:") || strings.HasPrefix(t, "[ 1s ]") {
			return true
		}
	}
	return false
}

// Writer writes Records into a folder, each under record.FileName, as an
// import builds them (its Write is an Options.Sink). An existing file is
// not overwritten (Records are never rewritten) unless Force is set.
type Writer struct {
	Dir   string
	Force bool
	// Written counts the Records written.
	Written int
	seen    map[string]bool
}

// Write writes one Record; the error names the file and why it was not
// written.
func (w *Writer) Write(r *record.Record) error {
	name := record.FileName(r)
	path := filepath.Join(w.Dir, name)
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if w.seen[name] {
		return fmt.Errorf("write %s: two imported records have the same version, step, threads and repeat (%s, %s, %d, %d)",
			path, r.Version, r.Step, r.Threads, r.Repeat)
	}
	w.seen[name] = true
	if !w.Force {
		if _, err := os.Stat(path); err == nil {
			return fmt.Errorf("write %s: file exists (records are never rewritten; remove it or pass --force)", path)
		}
	}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := record.Write(path, r); err != nil {
		return err
	}
	w.Written++
	return nil
}
