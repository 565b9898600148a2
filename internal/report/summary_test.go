package report

import (
	"math"
	"strings"
	"testing"

	"github.com/perfbench/perfbench/internal/report/internal/campaign"
	"github.com/perfbench/perfbench/record"
)

// TestSummaryEqualsTables checks every number of the summary against the
// full tables of the same report: the geometric means and counts against
// the rqps table's cells, each regression's rQPS against the rqps table,
// its verdict against the attribution table and its counter against the
// correlation table's first row.
func TestSummaryEqualsTables(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := campaign.Write(campaign.Spec{Steps: 42, Versions: 4, Hosts: 2, Repeats: 5, Seconds: 3, Seed: 7}, dir); err != nil {
		t.Fatal(err)
	}
	loaded, problems, err := record.Load([]string{dir}, false)
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	var recs []*record.Record
	for _, l := range loaded {
		recs = append(recs, l.Record)
	}
	if len(recs) != 42*4*2*5 {
		t.Fatalf("%d Records, want 42 steps × 4 versions × 2 hosts × 5 repeats", len(recs))
	}
	rep, err := build(recs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	find := func(id, host, version string) *table {
		for _, tb := range rep.Tables {
			if tb.ID == id && tb.Host == host && (version == "" || tb.Version == version) {
				return tb
			}
		}
		t.Fatalf("no %s table for %s %s", id, host, version)
		return nil
	}
	if rep.Tables[0].ID != tableSummary {
		t.Fatalf("the report opens with %s, want the summary", rep.Tables[0].ID)
	}
	sums, regs := 0, 0
	for _, st := range rep.Tables {
		if st.ID != tableSummary || st.Host == "" {
			continue
		}
		sums++
		rq := find(TableRQPS, st.Host, "")
		for _, row := range st.Sections[0].Rows {
			for gi := 0; gi < len(st.Header); gi += 3 {
				g := st.Header[gi]
				var logs float64
				n, tested, worse, better := 0, 0, 0, 0
				for _, s := range rq.Sections {
					if s.Name != g {
						continue
					}
					for _, r := range s.Rows {
						for _, c := range r.Cells {
							if c.Version != row.Label || !c.OK() {
								continue
							}
							n++
							logs += math.Log(c.Value)
							if c.Tested {
								tested++
							}
							if c.Tested && !c.Same && c.Value < 1 {
								worse++
							}
							if c.Tested && !c.Same && c.Value > 1 {
								better++
							}
						}
					}
				}
				geo, w, bt := row.Cells[gi], row.Cells[gi+1], row.Cells[gi+2]
				if tested == 0 {
					t.Errorf("%s %s %s: no rQPS tested", st.Host, row.Label, g)
				}
				if n == 0 || math.Abs(geo.Value-math.Exp(logs/float64(n))) > 1e-12 || w.Value != float64(worse) || bt.Value != float64(better) {
					t.Errorf("%s %s %s: summary %s %s %s, rqps table: geomean %.4f of %d steps, %d worse, %d better",
						st.Host, row.Label, g, geo.Text, w.Text, bt.Text, math.Exp(logs/float64(n)), n, worse, better)
				}
			}
		}
	}
	if sums != 2 {
		t.Fatalf("%d per-host summary tables, want 2", sums)
	}
	last := 0.0
	for _, st := range rep.Tables {
		if st.ID != tableSummary || st.Host != "" {
			continue
		}
		for _, row := range st.Sections[0].Rows {
			regs++
			host, version, q := row.Cells[0].Text, row.Cells[2].Text, row.Cells[3]
			if q.Value < last || q.Value >= 1 || !q.Tested || q.Same {
				t.Errorf("regression %s %s %s: rQPS %s after %.3f", host, version, row.Label, q.Text, last)
			}
			last = q.Value
			want := cell(t, rep, TableRQPS, "host "+host, row.Label, versionHeader(find(TableRQPS, host, ""), version))
			if q.Value != want.Value || q.Text != want.Text {
				t.Errorf("regression %s %s %s: rQPS %s, the rqps table has %s", host, version, row.Label, q.Text, want.Text)
			}
			att := find(tableAttribution, host, version)
			if v := rowCells(t, att, row.Label); v[len(v)-1].Text != row.Cells[4].Text {
				t.Errorf("regression %s %s %s: verdict %s, the attribution table has %s", host, version, row.Label, row.Cells[4].Text, v[len(v)-1].Text)
			}
			if top := find(tableCorrelation, host, version).Sections[0].Rows[0].Label; top != row.Cells[5].Text {
				t.Errorf("regression %s %s %s: tracked best by %s, the correlation table ranks %s first", host, version, row.Label, row.Cells[5].Text, top)
			}
		}
	}
	if regs != maxRegressions {
		t.Errorf("%d regressions listed, want %d", regs, maxRegressions)
	}
}

// versionHeader is the column header of version in table tb.
func versionHeader(tb *table, version string) string {
	for _, r := range tb.Sections[0].Rows {
		for i, c := range r.Cells {
			if c.Version == version {
				return tb.Header[i]
			}
		}
	}
	return ""
}

// rowCells returns the cells of the row labelled label.
func rowCells(t *testing.T, tb *table, label string) []tableCell {
	t.Helper()
	for _, s := range tb.Sections {
		for _, r := range s.Rows {
			if r.Label == label {
				return r.Cells
			}
		}
	}
	t.Fatalf("table %q has no row %s", tb.Title, strings.TrimSpace(label))
	return nil
}

// firstTable is the report's first table with that ID.
func firstTable(rep *report, id string) *table {
	for _, tb := range rep.Tables {
		if tb.ID == id {
			return tb
		}
	}
	return &table{}
}
