package remote

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/perfbench/perfbench/internal/tomlpos"
)

// Host is one test server of a hosts file:
//
//	[[host]]
//	name = "icelake"                      # label in progress lines and reports
//	destination = "bench@10.0.0.5"        # what ssh connects to (an alias of ~/.ssh/config too)
//	port = 2222                           # optional: ssh -p
//	identity = "~/.ssh/lab_ed25519"       # optional: ssh -i (relative to the hosts file)
//	ssh_options = ["ProxyJump=gw.lab"]    # optional: ssh -o, each "Key=Value"
//	workdir = "perfbench"                 # optional: perfbench's folder on the host
//	datadir = "/data/perfbench"           # optional: where servers keep their data (the plan's output.datadir)
//	cpus = "0-15"                         # optional: the CPUs the plan's placement divides (its run.cpus there)
//	[host.basedirs]                       # optional: a version's basedir on this host
//	"10.11" = "/opt/mariadb-10.11.9"
type Host struct {
	Name        string
	Destination string
	// Port is 0 when the hosts file gives none (ssh's default or config).
	Port int
	// Identity is a local path, made absolute; empty for ssh's default.
	Identity   string
	SSHOptions []string
	// WorkDir is perfbench's folder on the host, relative to the login
	// folder unless absolute; defaultWorkDir when not given.
	WorkDir string
	// DataDir (the plan's output.datadir, absolute or ~/...), CPUs and
	// Basedirs (by version label) override the plan on this host. They are
	// kept as written; Campaign.Run checks CPUs (the plan's run.cpus on
	// this host).
	DataDir  string
	CPUs     string
	Basedirs map[string]string
	// File and Line are where the host is defined.
	File string
	Line int
}

// defaultWorkDir is a host's work folder when the hosts file gives none:
// perfbench under the login folder.
const defaultWorkDir = "perfbench"

// errInvalid is wrapped by every problem found in a hosts file.
var errInvalid = errors.New("invalid hosts file")

// hostsError is one problem in a hosts file, at a line when one is known.
type hostsError struct {
	File string
	Line int
	Msg  string
}

func (e *hostsError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Unwrap returns ErrInvalid.
func (e *hostsError) Unwrap() error { return errInvalid }

// Errors is every problem found in a hosts file, in line order.
type Errors []*hostsError

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the problems.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// LoadHosts reads and parses a hosts file.
func LoadHosts(path string) ([]Host, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read hosts file: %w", err)
	}
	return parseHostsFile(path, b)
}

var (
	nameRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+=-]{0,63}$`)
	optionRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(=| )\S`)
)

// hostKeys are the keys of a [[host]] table.
var hostKeys = map[string]bool{
	"name": true, "destination": true, "port": true, "identity": true, "ssh_options": true,
	"workdir": true, "datadir": true, "cpus": true, "basedirs": true,
}

// managedOptions are ssh options perfbench sets itself to share one
// connection per host.
var managedOptions = []string{"controlmaster", "controlpath", "controlpersist"}

// parseHostsFile parses and validates a hosts file. name is its path: errors
// name it and a relative identity file is resolved against its folder. The
// error, when not nil, is an Errors listing every problem with its line.
func parseHostsFile(name string, data []byte) ([]Host, error) {
	return parseHosts(&hostsParser{file: name}, data)
}

// PlanHosts parses the [[host]] tables of a plan file (the same tables as
// a hosts file's), leaving its other keys to package plan. A plan without
// [[host]] tables has no hosts and no error.
func PlanHosts(name string, data []byte) ([]Host, error) {
	return parseHosts(&hostsParser{file: name, inPlan: true}, data)
}

func parseHosts(p *hostsParser, data []byte) ([]Host, error) {
	hosts := p.parse(data)
	if len(p.errs) > 0 {
		sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
		return nil, p.errs
	}
	return hosts, nil
}

type hostsParser struct {
	file  string
	lines tomlpos.Lines
	errs  Errors
	// inPlan: the document is a plan, whose other keys are not ours.
	inPlan bool
}

func (p *hostsParser) errorf(key string, format string, args ...any) {
	p.errs = append(p.errs, &hostsError{File: p.file, Line: p.lines.Line(key), Msg: fmt.Sprintf(format, args...)})
}

func (p *hostsParser) parse(data []byte) []Host {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			p.errs = append(p.errs, &hostsError{File: p.file, Line: pe.Position.Line, Msg: pe.Message})
		} else {
			p.errs = append(p.errs, &hostsError{File: p.file, Msg: err.Error()})
		}
		return nil
	}
	p.lines = tomlpos.Index(string(data))
	for k := range doc {
		if k != "host" && !p.inPlan {
			p.errorf(k, "unknown key %s: a hosts file has [[host]] tables only", k)
		}
	}
	raw, ok := doc["host"].([]map[string]any)
	if !ok {
		if _, present := doc["host"]; present {
			p.errorf("host", "host must be [[host]] tables, not %s", tomlType(doc["host"]))
		} else if !p.inPlan {
			p.errs = append(p.errs, &hostsError{File: p.file, Msg: "no [[host]] table: give each test server one, with a name and a destination"})
		}
		return nil
	}
	dir, _ := filepath.Abs(filepath.Dir(p.file))
	var hosts []Host
	seen := map[string]int{}
	for i, m := range raw {
		h, ok := p.host(i, m, dir)
		if !ok {
			continue
		}
		if first, dup := seen[h.Name]; dup {
			p.errorf(fmt.Sprintf("host[%d].name", i), "host name %q is already used by the host on line %d; give each host its own name", h.Name, first)
			continue
		}
		seen[h.Name] = h.Line
		hosts = append(hosts, h)
	}
	return hosts
}

// host validates one [[host]] table; ok is false when it has problems.
func (p *hostsParser) host(i int, m map[string]any, dir string) (Host, bool) {
	prefix := fmt.Sprintf("host[%d]", i)
	key := func(k string) string { return prefix + "." + k }
	nerr := len(p.errs)
	h := Host{File: p.file, Line: p.lines.Line(prefix), WorkDir: defaultWorkDir}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !hostKeys[k] {
			p.errorf(key(k), "unknown key %s in [[host]]; the keys are %s", k, strings.Join(sortedKeys(hostKeys), ", "))
		}
	}
	str := func(k string) (string, bool) {
		v, present := m[k]
		if !present {
			return "", false
		}
		s, ok := v.(string)
		if !ok {
			p.errorf(key(k), "%s must be a string, not %s", k, tomlType(v))
			return "", false
		}
		if strings.ContainsAny(s, "\x00\n\r") {
			p.errorf(key(k), "%s must be one line", k)
			return "", false
		}
		return s, true
	}

	if s, ok := str("name"); ok {
		h.Name = s
		if !nameRE.MatchString(s) {
			p.errorf(key("name"), "name %q: use letters, digits and . _ + = - (at most 64), starting with a letter or digit", s)
		}
	} else if _, present := m["name"]; !present {
		p.errorf(prefix, "[[host]] has no name; add name = \"...\" (its label in progress lines and reports)")
	}
	label := "[[host]]"
	if h.Name != "" {
		label = fmt.Sprintf("host %s", h.Name)
	}
	if s, ok := str("destination"); ok {
		h.Destination = s
		switch {
		case s == "" || strings.ContainsAny(s, " \t"):
			p.errorf(key("destination"), "%s: destination %q must be what ssh connects to, user@address or an alias of your ssh config", label, s)
		case strings.HasPrefix(s, "-"):
			p.errorf(key("destination"), "%s: destination %q starts with -, which ssh would read as an option", label, s)
		}
	} else if _, present := m["destination"]; !present {
		p.errorf(prefix, "%s has no destination; add destination = \"user@address\" (or an alias of your ssh config)", label)
	}
	if v, present := m["port"]; present {
		n, ok := v.(int64)
		switch {
		case !ok:
			p.errorf(key("port"), "%s: port must be a number, not %s", label, tomlType(v))
		case n < 1 || n > 65535:
			p.errorf(key("port"), "%s: port %d is not a TCP port (1 to 65535)", label, n)
		default:
			h.Port = int(n)
		}
	}
	if s, ok := str("identity"); ok && s != "" {
		h.Identity = localPath(s, dir)
	}
	if v, present := m["ssh_options"]; present {
		h.SSHOptions = p.options(key("ssh_options"), label, v)
	}
	if s, ok := str("workdir"); ok {
		if s == "" {
			p.errorf(key("workdir"), "%s: workdir is empty; leave it out for %q under the login folder", label, defaultWorkDir)
		} else {
			h.WorkDir = remotePath(s)
		}
	}
	if s, ok := str("datadir"); ok {
		if !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "~/") {
			p.errorf(key("datadir"), "%s: datadir %q must be an absolute path on the host (or ~/...)", label, s)
		} else {
			h.DataDir = s
		}
	}
	if s, ok := str("cpus"); ok {
		h.CPUs = s
	}
	if v, present := m["basedirs"]; present {
		t, ok := v.(map[string]any)
		if !ok {
			p.errorf(key("basedirs"), "%s: basedirs must be a table of version label = \"path\", not %s", label, tomlType(v))
		} else {
			h.Basedirs = map[string]string{}
			for _, l := range sortedKeys(t) {
				s, ok := t[l].(string)
				if !ok || s == "" {
					p.errorf(key("basedirs."+l), "%s: basedir of version %s must be a path, not %s", label, l, tomlType(t[l]))
					continue
				}
				h.Basedirs[l] = s
			}
		}
	}
	return h, len(p.errs) == nerr
}

// options validates ssh_options: a list of "Key=Value" strings.
func (p *hostsParser) options(key, label string, v any) []string {
	list, ok := v.([]any)
	if !ok {
		p.errorf(key, "%s: ssh_options must be a list of \"Key=Value\" strings, not %s", label, tomlType(v))
		return nil
	}
	var out []string
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			p.errorf(key, "%s: ssh_options must be a list of \"Key=Value\" strings; found %s", label, tomlType(e))
			continue
		}
		if !optionRE.MatchString(s) || strings.ContainsAny(s, "\x00\n\r") {
			p.errorf(key+"="+s, "%s: ssh option %q is not Key=Value (as in ssh -o, for example \"ProxyJump=gw.lab\")", label, s)
			continue
		}
		name := strings.ToLower(s[:strings.IndexAny(s, "= ")])
		for _, m := range managedOptions {
			if name == m {
				p.errorf(key+"="+s, "%s: ssh option %q: perfbench shares one connection per host itself (ControlMaster, ControlPath, ControlPersist); remove it", label, s)
			}
		}
		out = append(out, s)
	}
	return out
}

// localPath resolves a path on this machine: ~/ is the home folder, a
// relative path is relative to dir.
func localPath(s, dir string) string {
	if rest, ok := strings.CutPrefix(s, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if filepath.IsAbs(s) {
		return s
	}
	return filepath.Join(dir, s)
}

// remotePath makes ~ and ~/x relative to the login folder, where remote
// commands start (a quoted ~ would not be expanded).
func remotePath(s string) string {
	if s == "~" {
		return "."
	}
	if rest, ok := strings.CutPrefix(s, "~/"); ok && rest != "" {
		return rest
	}
	return s
}

func tomlType(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case int64:
		return "a number"
	case float64:
		return "a decimal number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "a list of tables"
	default:
		return "a date or time"
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
