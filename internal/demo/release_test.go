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
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/testenv"
)

// buildDeb makes a small mariadb-server-core package of release upstream
// with dpkg-deb: a usr/sbin/mariadbd that answers --version like the real
// one, and a usr/bin/mariadb-install-db; no my_print_defaults.
func buildDeb(t *testing.T, version, upstream string) string {
	t.Helper()
	testenv.NeedBinary(t, "dpkg-deb", "dpkg")
	root := filepath.Join(t.TempDir(), "pkg")
	files := map[string]string{
		"DEBIAN/control": fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: perfbench "+
			"tests <tests@localhost>\nDescription: test package\n", serverPackage, version),
		"usr/sbin/mariadbd": fmt.Sprintf("#!/bin/sh\necho 'mariadbd  Ver %s-MariaDB-0+deb12u1 for "+
			"debian-linux-gnu on x86_64 (Debian 12)'\n", upstream),
		"usr/bin/mariadb-install-db":         "#!/bin/sh\nexit 0\n",
		"usr/share/mysql/english/errmsg.sys": "",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(body, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	deb := filepath.Join(t.TempDir(), "server-core.deb")
	out, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", root, deb).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb --build: %v\n%s", err, out)
	}
	return deb
}

// fakeApt answers apt-cache madison with madison (or fails when madison
// is ""), and apt-get download by copying deb into the folder; other
// commands (dpkg-deb) run for real.
type fakeApt struct {
	madison    []string // successive answers; the last one repeats
	deb        string
	failUpdate bool
	ran        []string
}

func (f *fakeApt) run(ctx context.Context, dir string, stdout, stderr io.Writer, name string, args ...string) error {
	f.ran = append(f.ran, name+" "+strings.Join(args, " "))
	switch {
	case name == "apt-cache":
		ans := f.madison[0]
		if len(f.madison) > 1 {
			f.madison = f.madison[1:]
		}
		if ans == "" {
			fmt.Fprintln(stderr, "E: no network")
			return errors.New("exit status 100")
		}
		_, err := io.WriteString(stdout, ans)
		return err
	case name == "apt-get" && len(args) >= 2 && args[len(args)-2] == "download":
		if f.deb == "" {
			return errors.New("exit status 100")
		}
		b, err := os.ReadFile(f.deb)
		if err != nil {
			return err
		}
		v := strings.TrimPrefix(args[len(args)-1], serverPackage+"=")
		return os.WriteFile(filepath.Join(dir, serverPackage+"_"+strings.ReplaceAll(v, ":", "%3a")+"_amd64.deb"), b, 0o644)
	case name == "apt-get" && args[0] == "update":
		if f.failUpdate {
			return errors.New("exit status 100")
		}
		return nil
	}
	return execRun(ctx, dir, stdout, stderr, name, args...)
}

const madisonBoth = "mariadb-server-core | 1:10.11.19-0+deb12u1 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages\n" +
	"mariadb-server-core | 1:10.11.18-0+deb12u1 | http://deb.debian.org/debian bookworm/main amd64 Packages\n"

const madisonInstalledOnly = "mariadb-server-core | 1:10.11.19-0+deb12u1 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages\n"

func TestFetchOtherUnpacksThenReuses(t *testing.T) {
	deb := buildDeb(t, "1:10.11.18-0+deb12u1", "10.11.18")
	cache := t.TempDir()
	apt := &fakeApt{madison: []string{madisonBoth}, deb: deb}
	var log bytes.Buffer
	o := fetchOptions{Installed: "10.11.19", CacheDir: cache, Log: &log, run: apt.run}
	rel, err := fetchOther(context.Background(), o)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	dir := filepath.Join(cache, "mariadb-10.11.18-0+deb12u1")
	if rel.Version != "1:10.11.18-0+deb12u1" || rel.Upstream != "10.11.18" || rel.Dir != dir || rel.Basedir != filepath.Join(dir, "usr") || rel.Cached {
		t.Errorf("release %+v", rel)
	}
	if _, err := os.Stat(filepath.Join(rel.Basedir, "sbin", "mariadbd")); err != nil {
		t.Errorf("not unpacked: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, markerFile)); err != nil || string(b) != "mariadb-server-core=1:10.11.18-0+deb12u1\n" {
		t.Errorf("marker %q, %v", b, err)
	}
	if _, err := exec.LookPath("my_print_defaults"); err == nil {
		if _, err := os.Stat(filepath.Join(rel.Basedir, "bin", "my_print_defaults")); err != nil {
			t.Errorf("my_print_defaults not copied into the tree: %v", err)
		}
	}
	want := []string{"apt-cache madison mariadb-server-core", "download mariadb-server-core=1:10.11.18-0+deb12u1", "dpkg-deb -x "}
	if len(apt.ran) != 3 {
		t.Fatalf("ran %q", apt.ran)
	}
	for i, w := range want {
		if !strings.Contains(apt.ran[i], w) {
			t.Errorf("command %d: %q, want it to contain %q", i, apt.ran[i], w)
		}
	}
	left, _ := filepath.Glob(filepath.Join(cache, ".fetch-*"))
	if len(left) != 0 {
		t.Errorf("temporary folders left: %q", left)
	}

	// Again: found unpacked, nothing downloaded.
	apt.ran = nil
	rel2, err := fetchOther(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !rel2.Cached || rel2.Dir != dir {
		t.Errorf("second fetch: %+v", rel2)
	}
	if len(apt.ran) != 1 || !strings.HasPrefix(apt.ran[0], "apt-cache madison") {
		t.Errorf("second fetch ran %q, want only apt-cache madison", apt.ran)
	}

	// No network: the unpacked release is used, and the log says why.
	apt.ran = nil
	apt.madison = []string{""}
	log.Reset()
	rel3, err := fetchOther(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rel3.Dir != dir || !strings.Contains(log.String(), "apt could not provide another release") || !strings.Contains(log.String(), "E: no network") {
		t.Errorf("offline: %+v, log %q", rel3, log.String())
	}
	// The installed release is never picked from the cache.
	o.Installed = "10.11.18"
	if _, err := fetchOther(context.Background(), o); err == nil {
		t.Error("offline with only the installed release cached: no error")
	}
}

func TestFetchOtherUpdatesStaleLists(t *testing.T) {
	deb := buildDeb(t, "1:10.11.18-0+deb12u1", "10.11.18")
	apt := &fakeApt{madison: []string{madisonInstalledOnly, madisonBoth}, deb: deb}
	var log bytes.Buffer
	rel, err := fetchOther(context.Background(), fetchOptions{Installed: "10.11.19", CacheDir: t.TempDir(), Update: true, Log: &log, run: apt.run})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if rel.Upstream != "10.11.18" {
		t.Errorf("release %+v", rel)
	}
	if len(apt.ran) < 3 || apt.ran[1] != "apt-get update" {
		t.Errorf("ran %q, want apt-get update after the first madison", apt.ran)
	}
}

func TestFetchOtherNothingOnOffer(t *testing.T) {
	apt := &fakeApt{madison: []string{madisonInstalledOnly}}
	var log bytes.Buffer
	_, err := fetchOther(context.Background(), fetchOptions{Installed: "10.11.19", CacheDir: t.TempDir(), Update: false, Log: &log, run: apt.run})
	if !errors.Is(err, errNoOtherRelease) {
		t.Fatalf("err = %v, want ErrNoOtherRelease", err)
	}
	if !strings.Contains(err.Error(), "lists 1:10.11.19-0+deb12u1, installed is 10.11.19") {
		t.Errorf("error does not say what was on offer: %v", err)
	}
	for _, c := range apt.ran {
		if strings.HasPrefix(c, "apt-get") {
			t.Errorf("ran %q without Update", c)
		}
	}
}

func TestFetchOtherBadTree(t *testing.T) {
	// The package unpacks a server that says it is another release.
	deb := buildDeb(t, "1:10.11.18-0+deb12u1", "10.11.17")
	apt := &fakeApt{madison: []string{madisonBoth}, deb: deb}
	_, err := fetchOther(context.Background(), fetchOptions{Installed: "10.11.19", CacheDir: t.TempDir(), Log: io.Discard, run: apt.run})
	if err == nil || !strings.Contains(err.Error(), "says it is 10.11.17") {
		t.Errorf("err = %v, want the version mismatch", err)
	}
}
