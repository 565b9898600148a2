package sandbox

import "testing"

func TestMyCnfSetsTmpdir(t *testing.T) {
	for _, tc := range []struct {
		cnf  string
		want bool
	}{
		{"[mysqld]\ninnodb_buffer_pool_size=1G\n", false},
		{"[mysqld]\ntmpdir=/fast\n", true},
		{"[mariadbd]\n  tmpdir = /fast\n", true},
		{"[mysqld]\n# tmpdir=/fast\ntmp_table_size=1M\n", false},
		{"[mysqld]\ntmpdir\n", true},
	} {
		if got := myCnfSetsTmpdir([]byte(tc.cnf)); got != tc.want {
			t.Errorf("myCnfSetsTmpdir(%q) = %v, want %v", tc.cnf, got, tc.want)
		}
	}
}
