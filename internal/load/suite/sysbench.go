package suite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perfbench/perfbench/internal/host/proc"
)

// errOptions is wrapped by the errors Command, PrepareCommand and
// CleanupCommand return for options they cannot turn into a command line.
var errOptions = errors.New("invalid sysbench options")

// Options are the sysbench options every step of a run shares. Zero values
// take the defaults given in the comments.
type Options struct {
	// Sysbench is the sysbench binary: "sysbench" (found in PATH) when
	// empty.
	Sysbench string
	// ScriptDir is the folder WriteScripts wrote the project's Lua scripts
	// to. Steps with Own set need it.
	ScriptDir string

	// Connection. Host and Port select TCP; Socket a unix socket (the
	// client library uses the socket only when Host is empty or
	// "localhost"). Empty fields are left to sysbench's defaults.
	Host   string
	Port   int
	Socket string
	User   string
	// Password never goes on a command line, where every local user can
	// read it (/proc/PID/cmdline): ConfigFile holds it.
	Password string
	DB       string
	// ConfigFile is the sysbench option file (--config-file) holding the
	// password, written by WriteConfig; required when Password is set.
	ConfigFile string

	// Tables and TableSize are the data set: sbtest1..sbtestN of TableSize
	// rows each. Both must be at least 1.
	Tables    int
	TableSize int
	// Threads is the number of client connections; at least 1.
	Threads int

	// Warmup, Time and Tail make up the run: sysbench runs for
	// Warmup + Time + Tail, rounded up to whole seconds (sysbench 1.0 has
	// no warm-up option of its own). The runner opens its window after
	// Warmup and closes it after Time, so Tail (a second is enough) keeps
	// the load running until the window has been read. Time must be
	// positive.
	Warmup time.Duration
	Time   time.Duration
	Tail   time.Duration
	// ReportInterval is sysbench's --report-interval, whole seconds; 0
	// for none.
	ReportInterval time.Duration
	// RandType is the key distribution: uniform (the default, as published
	// runs use), gaussian, special or pareto. It also shapes column k at
	// prepare time.
	RandType string
	// Histogram adds sysbench's latency histogram to the report.
	Histogram bool

	// Extra options are appended last (so they win over the ones above) to
	// prepare, cleanup and run command lines, for example
	// --mysql_storage_engine=rocksdb or --mysql-ignore-errors=all.
	Extra []string
}

// randTypes are the --rand-type values sysbench 1.0.20 accepts.
func randTypes() []string { return []string{"uniform", "gaussian", "special", "pareto"} }

// CheckRandType returns an error wrapping errOptions unless t is one of
// randTypes (or empty, meaning uniform).
func CheckRandType(t string) error {
	if t == "" {
		return nil
	}
	for _, ok := range randTypes() {
		if t == ok {
			return nil
		}
	}
	if t == "zipfian" {
		return fmt.Errorf("%w: sysbench 1.0.20 has no --rand-type=zipfian (the update-zipf step draws zipfian keys itself); use %s",
			errOptions, strings.Join(randTypes(), ", "))
	}
	return fmt.Errorf("%w: --rand-type=%s is not one of %s", errOptions, t, strings.Join(randTypes(), ", "))
}

func (o Options) binary() string {
	if o.Sysbench == "" {
		return "sysbench"
	}
	return o.Sysbench
}

func (o Options) randType() string {
	if o.RandType == "" {
		return "uniform"
	}
	return o.RandType
}

// common returns the connection and data-set options.
func (o Options) common() ([]string, error) {
	if o.Tables < 1 {
		return nil, fmt.Errorf("%w: tables is %d, must be at least 1", errOptions, o.Tables)
	}
	if o.TableSize < 1 {
		return nil, fmt.Errorf("%w: table size is %d, must be at least 1", errOptions, o.TableSize)
	}
	if err := CheckRandType(o.RandType); err != nil {
		return nil, err
	}
	args := []string{"--db-driver=mysql"}
	if o.Host != "" {
		args = append(args, "--mysql-host="+o.Host)
	}
	if o.Port != 0 {
		args = append(args, "--mysql-port="+strconv.Itoa(o.Port))
	}
	if o.Socket != "" {
		args = append(args, "--mysql-socket="+o.Socket)
	}
	if o.User != "" {
		args = append(args, "--mysql-user="+o.User)
	}
	if o.Password != "" {
		if o.ConfigFile == "" {
			return nil, fmt.Errorf("%w: a password is passed in an option file (WriteConfig), never on the command line", errOptions)
		}
		args = append(args, "--config-file="+o.ConfigFile)
	}
	if o.DB != "" {
		args = append(args, "--mysql-db="+o.DB)
	}
	args = append(args,
		"--tables="+strconv.Itoa(o.Tables),
		"--table-size="+strconv.Itoa(o.TableSize),
		"--rand-type="+o.randType(),
	)
	return args, nil
}

// RunSeconds is the --time sysbench gets: Warmup + Time + Tail rounded up to
// whole seconds.
func (o Options) RunSeconds() int {
	total := o.Warmup + o.Time + o.Tail
	return int((total + time.Second - 1) / time.Second)
}

// Command returns the command line (argv, never a shell string) that runs
// step s with options o. Run it with the scripts written to o.ScriptDir.
func Command(s Step, o Options) ([]string, error) {
	common, err := o.common()
	if err != nil {
		return nil, fmt.Errorf("command for %s: %w", s.Label(), err)
	}
	if o.Threads < 1 {
		return nil, fmt.Errorf("command for %s: %w: threads is %d, must be at least 1", s.Label(), errOptions, o.Threads)
	}
	if o.Time <= 0 {
		return nil, fmt.Errorf("command for %s: %w: the measured time is %v, must be positive", s.Label(), errOptions, o.Time)
	}
	if o.Warmup < 0 || o.Tail < 0 {
		return nil, fmt.Errorf("command for %s: %w: warm-up %v and tail %v must not be negative", s.Label(), errOptions, o.Warmup, o.Tail)
	}
	if o.ReportInterval < 0 || o.ReportInterval%time.Second != 0 {
		return nil, fmt.Errorf("command for %s: %w: the report interval %v is not a whole number of seconds (sysbench 1.0 reports every N seconds)",
			s.Label(), errOptions, o.ReportInterval)
	}
	if s.Script == "" {
		return nil, fmt.Errorf("command for %s: %w: the step has no script", s.Label(), errOptions)
	}
	script := s.Script
	if s.Own {
		if o.ScriptDir == "" {
			return nil, fmt.Errorf("command for %s: %w: the step runs %s, a perfbench script: write the scripts with WriteScripts and set ScriptDir",
				s.Label(), errOptions, s.Script)
		}
		script = filepath.Join(o.ScriptDir, s.Script)
	}
	argv := []string{o.binary(), script}
	argv = append(argv, common...)
	argv = append(argv,
		"--threads="+strconv.Itoa(o.Threads),
		"--time="+strconv.Itoa(o.RunSeconds()),
		"--events=0",
	)
	if o.ReportInterval > 0 {
		argv = append(argv, "--report-interval="+strconv.Itoa(int(o.ReportInterval/time.Second)))
	}
	if o.Histogram {
		argv = append(argv, "--histogram=on")
	}
	argv = append(argv, "--range_size="+strconv.Itoa(s.Range))
	argv = append(argv, s.Args...)
	argv = append(argv, o.Extra...)
	return append(argv, "run"), nil
}

// PrepareCommand returns the command line that creates and loads the tables
// (sysbench's oltp_read_write prepare: sbtest1..N with a primary key on id
// and a secondary index on k), one client thread per table.
func PrepareCommand(o Options) ([]string, error) {
	return dataCommand(o, "prepare")
}

// CleanupCommand returns the command line that drops the tables, so that
// a load can start again from nothing.
func CleanupCommand(o Options) ([]string, error) {
	return dataCommand(o, "cleanup")
}

func dataCommand(o Options, cmd string) ([]string, error) {
	common, err := o.common()
	if err != nil {
		return nil, fmt.Errorf("%s command: %w", cmd, err)
	}
	argv := []string{o.binary(), "oltp_read_write"}
	argv = append(argv, common...)
	argv = append(argv, "--threads="+strconv.Itoa(o.Tables))
	argv = append(argv, o.Extra...)
	return append(argv, cmd), nil
}

// configPrefix starts the name of the folders WriteConfig makes under
// os.TempDir: perfbench-sysbench-PID-RANDOM, PID the process that made it.
const configPrefix = "perfbench-sysbench-"

// WriteConfig writes the password of o to a sysbench option file that only
// its owner can read, in a new folder under os.TempDir named after this
// process, and returns its path (for Options.ConfigFile) and the function
// that removes it, to call once sysbench has ended. It first removes the
// option files of processes that ended without removing theirs
// (RemoveStaleConfigs). sysbench 1.0 reads one option a line, name=value,
// where a value ends at a space or a comma unless it is quoted with ' or "
// (nothing escapes inside the quotes): a password holding a line break, or
// both quote characters and a space or comma, cannot be written.
func WriteConfig(o Options) (path string, remove func(), err error) {
	line, err := configLine("mysql-password", o.Password)
	if err != nil {
		return "", nil, err
	}
	RemoveStaleConfigs()
	dir, err := os.MkdirTemp("", configPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", nil, fmt.Errorf("write the sysbench option file: %w", err)
	}
	remove = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, "options.cfg")
	if err := os.WriteFile(path, []byte(line+"\n"), 0o600); err != nil {
		remove()
		return "", nil, fmt.Errorf("write the sysbench option file: %w", err)
	}
	return path, remove, nil
}

// staleAge is the age after which an option file's folder that names no
// process (made by a perfbench before folders were named after their
// process) is left over: no step of a plan lasts as long.
const staleAge = 48 * time.Hour

// RemoveStaleConfigs removes the folders of the option files under
// os.TempDir whose process has ended (a perfbench killed by SIGKILL leaves
// its password there), and returns the folders it removed. A symbolic link
// is not followed: os.RemoveAll removes the link.
func RemoveStaleConfigs() []string {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), configPrefix+"*"))
	var removed []string
	for _, dir := range matches {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		pidText, _, named := strings.Cut(strings.TrimPrefix(filepath.Base(dir), configPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		switch {
		case named && err == nil && pid > 0:
			if pid == os.Getpid() || proc.Alive(pid) {
				continue
			}
		case time.Since(fi.ModTime()) < staleAge:
			continue
		}
		if os.RemoveAll(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}

// CheckPassword reports a password WriteConfig cannot write.
func CheckPassword(password string) error {
	_, err := configLine("password", password)
	return err
}

// configLine is the line of a sysbench option file that gives option name
// the value v.
func configLine(name, v string) (string, error) {
	if strings.ContainsAny(v, "\n\r\x00") {
		return "", fmt.Errorf("%w: a %s with a line break cannot be given to sysbench", errOptions, name)
	}
	switch {
	case v != "" && !strings.ContainsAny(v, " \t\v\f,") && !strings.ContainsAny(v[:1], `"'#`):
		return name + "=" + v, nil
	case !strings.Contains(v, `"`):
		return name + `="` + v + `"`, nil
	case !strings.Contains(v, "'"):
		return name + "='" + v + "'", nil
	}
	return "", fmt.Errorf("%w: sysbench 1.0 cannot read a %s that holds both quote characters (' and \") and a space or "+
		"comma from its option file, and perfbench does not put it on a command line: change it", errOptions, name)
}

// redact returns a copy of argv with the values of password options
// replaced by "***", for logs and Records.
func redact(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = a
		for _, p := range []string{"--mysql-password=", "--mysql_password=", "--pgsql-password=", "--pgsql_password="} {
			if strings.HasPrefix(a, p) {
				out[i] = p + "***"
			}
		}
	}
	return out
}
