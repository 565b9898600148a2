package sandbox

import (
	"strings"
	"testing"
)

func TestLogExcerpt(t *testing.T) {
	// A failed mariadb-install-db: the bootstrap's error, then the
	// script's closing advice, longer than the tail an error quotes.
	out := "Installing MariaDB/MySQL system tables in '/d' ...\n" +
		"2026-11-30 19:30:00 0 [ERROR] InnoDB: io_setup() failed with EAGAIN\n" +
		"2026-11-30 19:30:00 0 [ERROR] Plugin 'InnoDB' init function returned error.\n" +
		"\nInstallation of system tables failed!  Examine the logs in\n" + strings.Repeat("advice\n", 20)
	got := logExcerpt([]byte(out), "/x/install.log")
	want := "its errors (all of its output is in /x/install.log):\n" +
		"2026-11-30 19:30:00 0 [ERROR] InnoDB: io_setup() failed with EAGAIN\n" +
		"2026-11-30 19:30:00 0 [ERROR] Plugin 'InnoDB' init function returned error.\n" +
		"Installation of system tables failed!  Examine the logs in"
	if got != want {
		t.Errorf("excerpt:\n%s\nwant:\n%s", got, want)
	}
	// Without error lines: the last 15 lines.
	got = logExcerpt([]byte(strings.Repeat("line\n", 30)+"last\n"), "/x/install.log")
	if !strings.HasPrefix(got, "last lines of /x/install.log:\n") || strings.Count(got, "\n") != 15 || !strings.HasSuffix(got, "\nlast") {
		t.Errorf("tail excerpt: %q", got)
	}
}
