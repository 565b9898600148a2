package mysqld

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const sampleCnf = `# perfbench's account
; another comment style
[client]
user = bench
password="p#ss word"   # quoted: the # is part of it
socket=/run/mysqld/mysqld.sock # trailing comment
port = 3307

[Perfbench]
user=perf_user
password='it''s'
skip_ssl
host = "db1"
password = "a\tb\\c\sd\"e"

[mysqld]
innodb_buffer_pool_size = 1G
!include /etc/mysql/extra.cnf
!includedir /etc/mysql/conf.d/
`

// A doubled quote is not an escape in option files: the value ends at the
// second quote and the text after it is an error, as in MySQL clients.
func TestParseOptionFileTextAfterQuote(t *testing.T) {
	_, err := parseOptionFile(strings.NewReader(sampleCnf), "sample.cnf")
	if err == nil || !strings.Contains(err.Error(), `sample.cnf line 11: option password: text "'s'" after the closing quote`) {
		t.Errorf("err = %v", err)
	}
}

func TestParseOptionFileValues(t *testing.T) {
	text := strings.Replace(sampleCnf, "password='it''s'\n", "password='it\\'s'\n", 1)
	of, err := parseOptionFile(strings.NewReader(text), "sample.cnf")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]option{
		"client": {
			{Name: "user", Value: "bench", HasValue: true},
			{Name: "password", Value: "p#ss word", HasValue: true},
			{Name: "socket", Value: "/run/mysqld/mysqld.sock", HasValue: true},
			{Name: "port", Value: "3307", HasValue: true},
		},
		"perfbench": {
			{Name: "user", Value: "perf_user", HasValue: true},
			{Name: "password", Value: "it's", HasValue: true},
			{Name: "skip-ssl"},
			{Name: "host", Value: "db1", HasValue: true},
			{Name: "password", Value: "a\tb\\c d\"e", HasValue: true},
		},
		"mysqld": {
			{Name: "innodb-buffer-pool-size", Value: "1G", HasValue: true},
		},
	}
	if !reflect.DeepEqual(of.Groups, want) {
		t.Errorf("groups:\n got %+v\nwant %+v", of.Groups, want)
	}
	wantInc := []include{{Path: "/etc/mysql/extra.cnf", Line: 18}, {Dir: true, Path: "/etc/mysql/conf.d/", Line: 19}}
	if !reflect.DeepEqual(of.Includes, wantInc) {
		t.Errorf("includes = %+v, want %+v", of.Includes, wantInc)
	}
	// Later lines win; names fold case and _/-.
	if o, ok := of.Get("PERFBENCH", "Password"); !ok || o.Value != "a\tb\\c d\"e" {
		t.Errorf("Get(perfbench, password) = %+v, %v", o, ok)
	}
	if o, ok := of.Get("mysqld", "innodb-buffer_pool-size"); !ok || o.Value != "1G" {
		t.Errorf("Get(mysqld, innodb-buffer_pool-size) = %+v, %v", o, ok)
	}
	if _, ok := of.Get("client", "host"); ok {
		t.Error("Get(client, host) found an option the group lacks")
	}
}

func TestParseOptionFileErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"user=x\n", "line 1: option \"user=x\" before any [group] header"},
		{"[client]\npassword=\"abc\n", "line 2: option password: missing closing quote"},
		{"[client\nuser=x\n", "line 1: group header \"[client\" has no closing ]"},
		{"[client]\n!includ /x\n", "line 2: unknown directive"},
		{"[]\n", "line 1: empty group name"},
		{"[client]\n=x\n", "line 2: option with no name"},
	} {
		_, err := parseOptionFile(strings.NewReader(tc.text), "f.cnf")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "f.cnf") {
			t.Errorf("ParseOptionFile(%q) error = %v, want one containing f.cnf and %q", tc.text, err, tc.want)
		}
	}
}

func TestLoadOptionFileIncludes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("conf.d/20-b.cnf", "[client]\nuser=from-b\n")
	write("conf.d/10-a.cnf", "[client]\nuser=from-a\nport=1\n")
	write("conf.d/30-c.txt", "[client]\nuser=not-a-cnf-file\n")
	write("extra.cnf", "[client]\npassword=from-extra\n")
	main := write("my.cnf", "[client]\nuser=main\n!include extra.cnf\n!includedir "+filepath.Join(dir, "conf.d")+"\n[client]\nport=2\n")
	of, err := loadOptionFile(main)
	if err != nil {
		t.Fatal(err)
	}
	// Reading order: main's user, extra, conf.d in name order (a, b),
	// then the rest of main; .txt files are skipped.
	want := []option{
		{Name: "user", Value: "main", HasValue: true},
		{Name: "password", Value: "from-extra", HasValue: true},
		{Name: "user", Value: "from-a", HasValue: true},
		{Name: "port", Value: "1", HasValue: true},
		{Name: "user", Value: "from-b", HasValue: true},
		{Name: "port", Value: "2", HasValue: true},
	}
	if !reflect.DeepEqual(of.Groups["client"], want) {
		t.Errorf("client options:\n got %+v\nwant %+v", of.Groups["client"], want)
	}
	if len(of.Files) != 4 {
		t.Errorf("files read = %v, want 4", of.Files)
	}

	loop := write("loop.cnf", "[client]\n!include loop.cnf\n")
	if _, err := loadOptionFile(loop); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Errorf("include loop: err = %v", err)
	}
}

func FuzzParseOptionFile(f *testing.F) {
	f.Add(sampleCnf)
	f.Add("[client]\npassword='a\\'b' # c\n")
	f.Fuzz(func(t *testing.T, text string) {
		of, err := parseOptionFile(strings.NewReader(text), "fuzz.cnf")
		if err != nil {
			return
		}
		for g, opts := range of.Groups {
			if g != strings.ToLower(g) || g == "" {
				t.Errorf("group %q not lower-case or empty", g)
			}
			for _, o := range opts {
				if o.Name != strings.ToLower(o.Name) || strings.Contains(o.Name, "_") {
					t.Errorf("option name %q not folded", o.Name)
				}
				if !o.HasValue && o.Value != "" {
					t.Errorf("bare option %q has a value %q", o.Name, o.Value)
				}
			}
		}
	})
}
