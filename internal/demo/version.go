package demo

import (
	"bufio"
	"bytes"
	"strings"
)

// compareVersions compares two Debian package versions
// ([epoch:]upstream[-revision]) as dpkg does: it returns -1, 0 or 1 when a
// sorts before, equal to or after b. A missing epoch is 0; a missing revision
// sorts before any revision.
func compareVersions(a, b string) int {
	ea, ua, ra := splitVersion(a)
	eb, ub, rb := splitVersion(b)
	if c := compareFragment(ea, eb); c != 0 {
		return c
	}
	if c := compareFragment(ua, ub); c != 0 {
		return c
	}
	return compareFragment(ra, rb)
}

// splitVersion splits a Debian version into epoch, upstream version and
// revision. The epoch is what comes before the first ':', the revision what
// comes after the last '-'.
func splitVersion(v string) (epoch, upstream, revision string) {
	v = strings.TrimSpace(v)
	epoch = "0"
	if i := strings.IndexByte(v, ':'); i >= 0 {
		epoch, v = v[:i], v[i+1:]
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		v, revision = v[:i], v[i+1:]
	}
	return epoch, v, revision
}

// compareFragment compares two upstream versions or revisions with dpkg's
// rule: alternately a run of non-digits, compared character by character
// with letters before other characters and '~' before everything (even the
// end), then a run of digits, compared as a number.
func compareFragment(a, b string) int {
	for a != "" || b != "" {
		for (a != "" && !isDigit(a[0])) || (b != "" && !isDigit(b[0])) {
			ca, cb := charOrder(a), charOrder(b)
			if ca != cb {
				return sign(ca - cb)
			}
			a, b = a[1:], b[1:]
		}
		a = strings.TrimLeft(a, "0")
		b = strings.TrimLeft(b, "0")
		da, db := digitRun(a), digitRun(b)
		if len(da) != len(db) {
			return sign(len(da) - len(db))
		}
		if c := strings.Compare(da, db); c != 0 {
			return c
		}
		a, b = a[len(da):], b[len(db):]
	}
	return 0
}

// charOrder is the weight of s's first character in a non-digit run: the
// end of the string (or a digit, which ends the run) 0, '~' -1, letters their
// code, other characters their code + 256.
func charOrder(s string) int {
	if s == "" || isDigit(s[0]) {
		return 0
	}
	c := s[0]
	switch {
	case c == '~':
		return -1
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return int(c)
	default:
		return int(c) + 256
	}
}

func digitRun(s string) string {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// upstream returns the release a Debian package version or a server's
// version string names: "1:10.11.18-0+deb12u1" and
// "10.11.18-MariaDB-0+deb12u1" both give "10.11.18". It is the leading run of
// digits and dots after the epoch.
func upstream(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.IndexByte(v, ':'); i > 0 && digitRun(v) == v[:i] {
		v = v[i+1:] // an epoch
	}
	i := 0
	for i < len(v) && (isDigit(v[i]) || v[i] == '.') {
		i++
	}
	return strings.TrimRight(v[:i], ".")
}

// series returns the major.minor of a release ("10.11" of "10.11.18"), the
// suite of point releases it belongs to.
func series(upstream string) string {
	parts := strings.SplitN(upstream, ".", 3)
	if len(parts) < 2 {
		return upstream
	}
	return parts[0] + "." + parts[1]
}

// parseMadison reads the output of `apt-cache madison PACKAGE` and returns
// the versions of PACKAGE's binary packages on offer, without duplicates, in
// the order listed. Lines of other packages and of source packages
// ("... Sources") are left out. A line reads:
//
//	mariadb-server-core | 1:10.11.18-0+deb12u1 | http://deb.debian.org/debian bookworm/main amd64 Packages
func parseMadison(data []byte, pkg string) []string {
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if len(f) != 3 {
			continue
		}
		name, ver, src := strings.TrimSpace(f[0]), strings.TrimSpace(f[1]), strings.TrimSpace(f[2])
		if name != pkg || ver == "" || !strings.HasSuffix(src, "Packages") || seen[ver] {
			continue
		}
		seen[ver] = true
		out = append(out, ver)
	}
	return out
}

// pickOther chooses the release to compare with the installed one
// (installed is its upstream version, "10.11.19"): among the offered Debian
// versions of the same series (10.11), the newest whose upstream version
// differs from the installed one. It returns "" when there is none.
func pickOther(installed string, offered []string) string {
	best := ""
	for _, v := range offered {
		up := upstream(v)
		if up == "" || up == installed || series(up) != series(installed) {
			continue
		}
		if best == "" || compareVersions(v, best) > 0 {
			best = v
		}
	}
	return best
}
