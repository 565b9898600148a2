package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/perfbench/perfbench/mysqld/sandbox"
)

// serverPackage is the Debian package that holds mariadbd,
// mariadb-install-db and the server's share/ files: the one unpacked for a
// second release.
const serverPackage = "mariadb-server-core"

// errNoOtherRelease means apt offers no other point release of the
// installed server's series (and none is unpacked in the cache).
var errNoOtherRelease = errors.New("no other point release of the installed series on offer")

// release is a MariaDB release unpacked from its Debian package, runnable
// from its own folder without being installed.
type release struct {
	// Version is the package's Debian version ("1:10.11.18-0+deb12u1"),
	// Upstream the release ("10.11.18").
	Version  string
	Upstream string
	// Dir is the folder it is unpacked in; Basedir is Dir/usr, the
	// server's base directory (sbin/mariadbd, bin/, share/mysql/).
	Dir     string
	Basedir string
	// Cached is true when the release was unpacked by an earlier run.
	Cached bool
}

// fetchOptions say which release to fetch and where.
type fetchOptions struct {
	// Installed is the installed server's release ("10.11.19").
	Installed string
	// CacheDir holds the unpacked releases, one folder each
	// (mariadb-<version without epoch>); defaultCacheDir when empty.
	CacheDir string
	// Update allows `apt-get update` when apt offers no other release or
	// its download fails (stale package lists): only root can.
	Update bool
	// Log receives what is done and apt's output.
	Log io.Writer

	// run runs commands; nil runs them (tests fake apt).
	run runFunc
}

// runFunc runs a command in dir (the current folder when empty), its output
// going to stdout and stderr.
type runFunc func(ctx context.Context, dir string, stdout, stderr io.Writer, name string, args ...string) error

func execRun(ctx context.Context, dir string, stdout, stderr io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	// apt and dpkg clean up after SIGINT; SIGKILL may leave dpkg's
	// database locked.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// defaultCacheDir is where releases are unpacked: /var/cache/perfbench for
// root, else perfbench/ under the user's cache folder ($XDG_CACHE_HOME or
// ~/.cache).
func defaultCacheDir() string {
	if os.Geteuid() == 0 {
		return "/var/cache/perfbench"
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "perfbench")
	}
	return filepath.Join(os.TempDir(), "perfbench-cache")
}

// markerFile, in a release's folder, names the package and version unpacked
// there; it is written last, so a folder without it is incomplete.
const markerFile = ".perfbench-release"

// releaseDir is the folder of a Debian version in the cache:
// mariadb-10.11.18-0+deb12u1 (the epoch left out).
func releaseDir(cacheDir, version string) string {
	v := version
	if i := strings.IndexByte(v, ':'); i >= 0 {
		v = v[i+1:]
	}
	return filepath.Join(cacheDir, "mariadb-"+v)
}

// fetchOther finds the release to compare the installed one with (see
// pickOther: `apt-cache madison mariadb-server-core`), and makes it
// runnable: `apt-get download` and `dpkg-deb -x` into the cache, or the
// folder an earlier run unpacked. When apt cannot provide it (no network,
// nothing on offer), a release already unpacked in the cache is used if there
// is one. The server binary is run once (--version) to check that it works.
func fetchOther(ctx context.Context, o fetchOptions) (*release, error) {
	if o.CacheDir == "" {
		o.CacheDir = defaultCacheDir()
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.run == nil {
		o.run = execRun
	}
	rel, aptErr := o.fromApt(ctx)
	if aptErr == nil {
		return rel, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if rel := o.fromCache(ctx); rel != nil {
		fmt.Fprintf(o.Log, "perfbench demo: apt could not provide another release (%v); using %s, unpacked in %s by an earlier run\n",
			aptErr, rel.Version, rel.Dir)
		return rel, nil
	}
	return nil, aptErr
}

// fromApt asks apt for the versions on offer and fetches the chosen one,
// running apt-get update once first when that may help.
func (o *fetchOptions) fromApt(ctx context.Context) (*release, error) {
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		if attempt == 1 {
			if !o.Update {
				break
			}
			fmt.Fprintf(o.Log, "perfbench demo: %v; refreshing apt's package lists: apt-get update\n", lastErr)
			if err := o.run(ctx, "", o.Log, o.Log, "apt-get", "update"); err != nil {
				return nil, fmt.Errorf("%w (then apt-get update failed: %v)", lastErr, err)
			}
		}
		var out, errb bytes.Buffer
		if err := o.run(ctx, "", &out, &errb, "apt-cache", "madison", serverPackage); err != nil {
			lastErr = fmt.Errorf("list the versions of %s on offer: %w: %s", serverPackage, err, strings.TrimSpace(errb.String()))
			continue
		}
		offered := parseMadison(out.Bytes(), serverPackage)
		v := pickOther(o.Installed, offered)
		if v == "" {
			lastErr = fmt.Errorf("%w: apt-cache madison %s lists %s, installed is %s",
				errNoOtherRelease, serverPackage, listOrNothing(offered), o.Installed)
			continue
		}
		if rel := o.cached(ctx, v); rel != nil {
			return rel, nil
		}
		rel, err := o.download(ctx, v)
		if err == nil {
			return rel, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		lastErr = err
	}
	return nil, lastErr
}

func listOrNothing(vs []string) string {
	if len(vs) == 0 {
		return "nothing"
	}
	return strings.Join(vs, ", ")
}

// cached returns the release of version v when the cache holds it unpacked
// and its server runs.
func (o *fetchOptions) cached(ctx context.Context, v string) *release {
	dir := releaseDir(o.CacheDir, v)
	b, err := os.ReadFile(filepath.Join(dir, markerFile))
	if err != nil || strings.TrimSpace(string(b)) != serverPackage+"="+v {
		return nil
	}
	rel := &release{Version: v, Upstream: upstream(v), Dir: dir, Basedir: filepath.Join(dir, "usr"), Cached: true}
	if err := check(ctx, rel); err != nil {
		fmt.Fprintf(o.Log, "perfbench demo: warning: %v; unpacking it again\n", err)
		return nil
	}
	fmt.Fprintf(o.Log, "perfbench demo: %s %s is unpacked in %s already\n", serverPackage, v, dir)
	return rel
}

// fromCache returns the newest release unpacked in the cache that pickOther
// accepts, or nil.
func (o *fetchOptions) fromCache(ctx context.Context) *release {
	dirs, _ := filepath.Glob(filepath.Join(o.CacheDir, "mariadb-*", markerFile))
	var versions []string
	for _, m := range dirs {
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		pkg, v, ok := strings.Cut(strings.TrimSpace(string(b)), "=")
		if ok && pkg == serverPackage {
			versions = append(versions, v)
		}
	}
	sort.Slice(versions, func(i, j int) bool { return compareVersions(versions[i], versions[j]) > 0 })
	for len(versions) > 0 {
		v := pickOther(o.Installed, versions)
		if v == "" {
			return nil
		}
		if rel := o.cached(ctx, v); rel != nil {
			return rel
		}
		versions = removeString(versions, v)
	}
	return nil
}

func removeString(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// download fetches version v of the server package and unpacks it into the
// cache: into a temporary folder first, renamed into place once complete,
// so that an interrupted fetch leaves nothing that looks usable.
func (o *fetchOptions) download(ctx context.Context, v string) (*release, error) {
	dir := releaseDir(o.CacheDir, v)
	if err := os.MkdirAll(o.CacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("create the release cache %s: %w", o.CacheDir, err)
	}
	tmp, err := os.MkdirTemp(o.CacheDir, ".fetch-")
	if err != nil {
		return nil, fmt.Errorf("create a folder in the release cache %s: %w", o.CacheDir, err)
	}
	defer os.RemoveAll(tmp)
	spec := serverPackage + "=" + v
	fmt.Fprintf(o.Log, "perfbench demo: fetching %s without installing it: apt-get download %s; dpkg-deb -x into %s\n", spec, spec, dir)
	args := []string{"download", spec}
	if os.Geteuid() == 0 {
		// apt drops to the _apt user to download, which cannot write to
		// a root-owned folder; say so rather than let apt warn about it.
		args = append([]string{"-o", "APT::Sandbox::User=root"}, args...)
	}
	if err := o.run(ctx, tmp, o.Log, o.Log, "apt-get", args...); err != nil {
		return nil, fmt.Errorf("download %s: %w", spec, err)
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if len(debs) != 1 {
		return nil, fmt.Errorf("download %s: apt-get download left %d .deb files in %s, want 1", spec, len(debs), tmp)
	}
	tree := filepath.Join(tmp, "tree")
	if err := o.run(ctx, "", o.Log, o.Log, "dpkg-deb", "-x", debs[0], tree); err != nil {
		return nil, fmt.Errorf("unpack %s: %w", filepath.Base(debs[0]), err)
	}
	if err := completeTree(filepath.Join(tree, "usr")); err != nil {
		return nil, fmt.Errorf("unpack %s: %w", spec, err)
	}
	if err := os.WriteFile(filepath.Join(tree, markerFile), []byte(spec+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("unpack %s: %w", spec, err)
	}
	// A folder without a marker is what an older, interrupted fetch left.
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("replace %s: %w", dir, err)
	}
	if err := os.Rename(tree, dir); err != nil {
		return nil, fmt.Errorf("move the unpacked %s into %s: %w", spec, dir, err)
	}
	rel := &release{Version: v, Upstream: upstream(v), Dir: dir, Basedir: filepath.Join(dir, "usr")}
	if err := check(ctx, rel); err != nil {
		return nil, err
	}
	return rel, nil
}

// completeTree checks that an unpacked server tree has a server binary and
// the install script, and copies the installed my_print_defaults into its
// bin/ when it lacks one: mariadb-install-db runs it, and it comes in
// mariadb-client, not in the server package.
func completeTree(basedir string) error {
	if _, err := sandbox.FindServerBinary(basedir); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(basedir, "bin", "mariadb-install-db")); err != nil {
		return fmt.Errorf("no bin/mariadb-install-db in %s: %w", basedir, err)
	}
	dst := filepath.Join(basedir, "bin", "my_print_defaults")
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	src, err := exec.LookPath("my_print_defaults")
	if err != nil {
		return fmt.Errorf("%s has no bin/my_print_defaults and none is installed to copy there (install it: apt-get install mariadb-client)", basedir)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("copy my_print_defaults into %s: %w", dst, err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		return fmt.Errorf("copy my_print_defaults into %s: %w", dst, err)
	}
	return nil
}

// check runs the release's server with --version: a tree whose libraries
// this machine lacks fails here rather than in the middle of the plan.
func check(ctx context.Context, rel *release) error {
	bin, err := sandbox.FindServerBinary(rel.Basedir)
	if err != nil {
		return err
	}
	_, v, err := sandbox.Detect(ctx, bin)
	if err != nil {
		return fmt.Errorf("run the unpacked server %s: %w", bin, err)
	}
	if upstream(v) != rel.Upstream {
		return fmt.Errorf("the unpacked server %s says it is %s, the package %s", bin, v, rel.Version)
	}
	return nil
}
