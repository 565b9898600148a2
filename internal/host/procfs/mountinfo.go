package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// errNoCgroup2: there is no cgroup v2 to use: it is not mounted, or the
// process is in cgroup v1 hierarchies only.
var errNoCgroup2 = errors.New("no cgroup v2")

// mount is one line of a mountinfo file.
type mount struct {
	ID, Parent int
	// Major and Minor are the st_dev of files on the mount (0:N for btrfs,
	// overlay, tmpfs...).
	Major, Minor uint32
	// Root is the folder of the file system mounted at MountPoint ("/"
	// unless a sub-folder is bind-mounted; for cgroup2, the cgroup the
	// mount shows).
	Root       string
	MountPoint string
	FSType     string
	// Source is what was mounted: a device path, or a name ("tmpfs",
	// "none"); it may be empty.
	Source string
}

// Mountinfo reads the mount table of this process's mount namespace
// (/proc/self/mountinfo).
func (f FS) Mountinfo() ([]mount, error) {
	p := f.path("self", "mountinfo")
	b, err := readFile(p)
	if err != nil {
		return nil, fmt.Errorf("read the mount table: %w", err)
	}
	m, err := parseMountinfo(b)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", p, err)
	}
	return m, nil
}

// Cgroup2Mount returns the first cgroup2 mount of the mount table, an
// error matching errNoCgroup2 when there is none.
func (f FS) Cgroup2Mount() (mount, error) {
	mounts, err := f.Mountinfo()
	if err != nil {
		return mount{}, err
	}
	for _, m := range mounts {
		if m.FSType == "cgroup2" {
			return m, nil
		}
	}
	return mount{}, fmt.Errorf("cgroup v2 is not mounted (mount -t cgroup2 none /sys/fs/cgroup): %w", errNoCgroup2)
}

// CgroupDir returns the folder, under the FS's root, of the cgroup v2 path
// cg (as Proc.Cgroup returns it), through a cgroup2 mount whose root holds
// it. A path outside every cgroup2 mount, or outside this process's cgroup
// namespace (it starts with "/.."), has no folder here.
func (f FS) CgroupDir(cg string) (string, error) {
	switch {
	case strings.HasPrefix(cg, "/.."):
		return "", fmt.Errorf("cgroup %s is outside this process's cgroup namespace: it has no folder here", cg)
	case !strings.HasPrefix(cg, "/") || filepath.Clean(cg) != cg:
		return "", fmt.Errorf("%q is not a cgroup path (one starting with / and without . or .. elements)", cg)
	}
	mounts, err := f.Mountinfo()
	if err != nil {
		return "", err
	}
	var found []string
	for _, m := range mounts {
		if m.FSType != "cgroup2" {
			continue
		}
		if rel, ok := under(cg, m.Root); ok {
			return filepath.Join(f.rootDir(), m.MountPoint, rel), nil
		}
		found = append(found, m.MountPoint+", which shows only "+m.Root)
	}
	if len(found) == 0 {
		return "", fmt.Errorf("find the folder of cgroup %s: cgroup v2 is not mounted (mount -t cgroup2 none /sys/fs/cgroup): %w", cg, errNoCgroup2)
	}
	return "", fmt.Errorf("find the folder of cgroup %s: it is not under the cgroup2 mount at %s", cg, strings.Join(found, ", nor at "))
}

// under returns path relative to root when path is root or inside it.
func under(path, root string) (string, bool) {
	if root == "/" {
		return path, true
	}
	if path == root {
		return "/", true
	}
	if rest, ok := strings.CutPrefix(path, root); ok && strings.HasPrefix(rest, "/") {
		return rest, true
	}
	return "", false
}

// Cgroup returns the process's cgroup v2 path, relative to the cgroup
// namespace of the process reading (/proc/PID/cgroup's "0::" line). A
// process in cgroup v1 hierarchies only is an error matching errNoCgroup2.
func (p Proc) Cgroup() (string, error) {
	b, err := p.ReadFile("cgroup")
	if err != nil {
		return "", err
	}
	cg, ok := parseCgroup(b)
	if !ok {
		return "", fmt.Errorf("%s is in no cgroup v2 (only cgroup v1 hierarchies): %w", p, errNoCgroup2)
	}
	return cg, nil
}

// parseCgroup returns the cgroup v2 path of a cgroup file: the line
// "0::/path".
func parseCgroup(b []byte) (string, bool) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("0::")); ok && bytes.HasPrefix(rest, []byte("/")) {
			return string(rest), true
		}
	}
	return "", false
}

// parseMountinfo parses a mountinfo file: per line, space-separated, mount
// id, parent id, major:minor, root, mount point, mount options, optional
// fields ending with "-", file system type, source and super options
// (proc(5)). Spaces, tabs, newlines and backslashes inside the fields are
// written as octal escapes (\040); the source may be empty.
func parseMountinfo(b []byte) ([]mount, error) {
	var out []mount
	for n, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		bad := func(what string) error {
			return fmt.Errorf("%w: mountinfo line %d: %s in %q", errFormat, n+1, what, line)
		}
		f := strings.Split(line, " ")
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || len(f) < sep+4 {
			return nil, bad("too few fields")
		}
		var m mount
		var err1, err2 error
		m.ID, err1 = strconv.Atoi(f[0])
		m.Parent, err2 = strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			return nil, bad("mount id")
		}
		maj, min, ok := strings.Cut(f[2], ":")
		ma, err1 := strconv.ParseUint(maj, 10, 32)
		mi, err2 := strconv.ParseUint(min, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			return nil, bad("device number")
		}
		m.Major, m.Minor = uint32(ma), uint32(mi)
		m.Root, m.MountPoint = unescape(f[3]), unescape(f[4])
		m.FSType, m.Source = unescape(f[sep+1]), unescape(f[sep+2])
		out = append(out, m)
	}
	return out, nil
}

// unescape undoes the octal escapes (\040 for a space) of mountinfo fields;
// a backslash not followed by three octal digits of a byte stays.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
