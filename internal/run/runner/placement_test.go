package runner

import (
	"strings"
	"testing"

	"github.com/perfbench/perfbench/record"
)

// TestPlacementWarning: a Record warns when the kernel's lists are not
// what perfbench set, and only then.
func TestPlacementWarning(t *testing.T) {
	for _, c := range []struct {
		pl   record.Placement
		want string
	}{
		{record.Placement{Mode: "split", Server: "1", Client: "0", ServerAllowed: "1", ClientAllowed: "0"}, ""},
		{record.Placement{Mode: "none", ServerAllowed: "0-1", ClientAllowed: "0-1"}, ""},
		{record.Placement{Mode: "none", ServerAllowed: "1", ClientAllowed: "0", ServerThreadsElsewhere: 3}, ""},
		{record.Placement{Mode: "split", Server: "1", Client: "0", ServerAllowed: "0-1", ClientAllowed: "0"}, "the server was pinned to CPUs 1 but may run on 0-1"},
		{record.Placement{Mode: "split", Server: "1", Client: "0", ServerAllowed: "1", ServerThreadsElsewhere: 2,
			ClientAllowed: "0"}, "2 threads of the server may run on other CPUs than 1"},
		{record.Placement{Mode: "cpus", Client: "0", ServerAllowed: "0-3", ClientAllowed: "0-3"}, "the load was pinned to CPUs 0 but may run on 0-3"},
		// Not read (a failed step): nothing to compare.
		{record.Placement{Mode: "split", Server: "1", Client: "0"}, ""},
	} {
		got := placementWarning(&c.pl)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%+v: warning %q, want %q", c.pl, got, c.want)
		}
	}
}
