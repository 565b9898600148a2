package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/perfbench/perfbench/mysqld/sandbox"
)

// tool is a program the demo runs, and the Debian package that has it.
type tool struct {
	Name    string
	Package string
	// Optional tools are installed when missing, but the demo runs
	// without them.
	Optional bool
}

// tools are the programs the demo needs, in the order they are checked.
var tools = []tool{
	{Name: "mariadbd", Package: "mariadb-server"},
	{Name: "mariadb-install-db", Package: "mariadb-server"},
	{Name: "mariadb", Package: "mariadb-client"},
	// mariadb-install-db runs it; an unpacked release gets a copy.
	{Name: "my_print_defaults", Package: "mariadb-client"},
	{Name: "sysbench", Package: "sysbench"},
	// The reference tool; perfbench counts without it.
	{Name: "perf", Package: "linux-perf", Optional: true},
}

// errMissingTools means programs the demo needs are missing and could not
// be installed; the error says the command that installs them.
var errMissingTools = errors.New("missing programs")

// findTool reports whether the program name is installed: in PATH, or in
// /usr/sbin or /usr/bin (which a non-root PATH may lack).
func findTool(name string) bool {
	if name == "mariadbd" {
		_, err := sandbox.FindServerBinary("")
		return err == nil
	}
	if _, err := exec.LookPath(name); err == nil {
		return true
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin"} {
		if st, err := os.Stat(filepath.Join(d, name)); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// missingTools returns the Tools that find does not find.
func missingTools(find func(name string) bool) []tool {
	var out []tool
	for _, t := range tools {
		if !find(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// packages returns the Debian packages of tools, each once, in order.
func packages(tools []tool) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range tools {
		if !seen[t.Package] {
			seen[t.Package] = true
			out = append(out, t.Package)
		}
	}
	return out
}

// installCommand is the shell command that installs pkgs, as root.
func installCommand(pkgs []string) string {
	return "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends " + strings.Join(pkgs, " ")
}

func toolNames(tools []tool) string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name + " (" + t.Package + ")"
	}
	return strings.Join(names, ", ")
}

func required(tools []tool) []tool {
	var out []tool
	for _, t := range tools {
		if !t.Optional {
			out = append(out, t)
		}
	}
	return out
}

// toolsEnv is what ensureTools needs of the machine; tests fake it.
type toolsEnv struct {
	root bool
	find func(string) bool
	run  runFunc
	log  io.Writer
}

// ensureTools makes sure the required Tools are there: when some are
// missing (optional ones included) and perfbench runs as root it installs
// their packages with apt-get, saying so on the log; otherwise, or when apt
// fails, it returns errMissingTools with the command to run. Optional tools
// that stay missing are a warning.
func ensureTools(ctx context.Context, e toolsEnv) error {
	missing := missingTools(e.find)
	if len(missing) == 0 {
		return nil
	}
	pkgs := packages(missing)
	cmd := installCommand(pkgs)
	if !e.root {
		if req := required(missing); len(req) > 0 {
			return fmt.Errorf("%w: %s; install them as root: %s", errMissingTools, toolNames(req), cmd)
		}
		fmt.Fprintf(e.log, "perfbench demo: warning: %s not installed (optional: the demo runs without it; install it as root: %s)\n", toolNames(missing), cmd)
		return nil
	}
	fmt.Fprintf(e.log, "perfbench demo: installing %s: %s\n", toolNames(missing), cmd)
	err := e.run(ctx, "", e.log, e.log, "apt-get", "update")
	if err == nil {
		err = e.run(ctx, "", e.log, e.log, "apt-get", append([]string{"install", "-y", "--no-install-recommends"}, pkgs...)...)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	still := missingTools(e.find)
	if req := required(still); len(req) > 0 {
		why := "apt-get installed the packages but they are still not found"
		if err != nil {
			why = err.Error()
		}
		return fmt.Errorf("%w: %s (%s); install them: %s", errMissingTools, toolNames(req), why, cmd)
	}
	if len(still) > 0 {
		fmt.Fprintf(e.log, "perfbench demo: warning: %s could not be installed (optional: the demo runs without it)\n", toolNames(still))
	}
	return nil
}
