package report

import (
	"bytes"
	"testing"

	"github.com/perfbench/perfbench/internal/report/internal/campaign"
	"github.com/perfbench/perfbench/record"
)

// Write recycles the cells of the tables it has rendered into the tables
// it builds after (releaseCells): each format's output is what the
// tables built whole (build, which recycles nothing) render to, report
// after report, on Records old and new.
func TestWriteRecyclesCells(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := campaign.Write(campaign.Spec{Steps: 4, Versions: 3, Hosts: 2, Repeats: 3, Seconds: 5, Seed: 9}, dir); err != nil {
		t.Fatal(err)
	}
	renderers := map[string]func() renderer{"text": textRenderer, "markdown": markdownRenderer, "html": htmlRenderer, "csv": csvRenderer, "json": jsonRenderer}
	for _, in := range []string{"../../testdata/records", dir} {
		loaded, _, err := record.Load([]string{in}, false)
		if err != nil {
			t.Fatal(err)
		}
		var recs []*record.Record
		for _, l := range loaded {
			recs = append(recs, l.Record)
		}
		for format, mk := range renderers {
			rep, err := build(recs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := render(&want, rep, mk()); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				var got bytes.Buffer
				if err := Write(&got, format, recs, nil, Options{}); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Fatalf("%s, %s, report %d: Write's output differs from the tables built whole", in, format, i+1)
				}
			}
		}
	}
}
