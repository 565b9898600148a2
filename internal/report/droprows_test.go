package report

import (
	"reflect"
	"testing"

	"github.com/perfbench/perfbench/analysis"
)

// dropEmptyRows drops the value rows of nothing but "not recorded" cells
// and the sections left without rows; it keeps headings, rows with a
// word or a cell in any other state, and the order of what it keeps.
func TestDropEmptyRows(t *testing.T) {
	missing := tableCell{Cell: analysis.Stated(analysis.Missing), Text: "-"}
	failed := tableCell{Cell: analysis.Stated(analysis.Failed), Text: "failed"}
	word := tableCell{Cell: analysis.Stated(analysis.Missing), Text: "none", word: true}
	one := tableCell{Cell: analysis.Val(1), Text: "1"}
	tb := &table{Sections: []section{
		{Name: "a", Rows: []row{
			{Label: "gone", Cells: []tableCell{missing, missing}},
			{Label: "- host", Kind: rowHeading},
			{Label: "kept", Cells: []tableCell{missing, one}},
			{Label: "gone too", Cells: []tableCell{missing}},
			{Label: "failed", Cells: []tableCell{failed}},
		}},
		{Name: "b", Rows: []row{{Label: "gone", Cells: []tableCell{missing}}}},
		{Name: "c", Rows: []row{{Label: "verdict", Cells: []tableCell{missing, word}}}},
	}}
	tb.dropEmptyRows()
	want := []section{
		{Name: "a", Rows: []row{
			{Label: "- host", Kind: rowHeading},
			{Label: "kept", Cells: []tableCell{missing, one}},
			{Label: "failed", Cells: []tableCell{failed}},
		}},
		{Name: "c", Rows: []row{{Label: "verdict", Cells: []tableCell{missing, word}}}},
	}
	if !reflect.DeepEqual(tb.Sections, want) {
		t.Errorf("sections kept:\n%+v\nwant\n%+v", tb.Sections, want)
	}
	all := &table{Sections: []section{{Rows: []row{{Label: "gone", Cells: []tableCell{missing}}}}}}
	if all.dropEmptyRows(); all.Sections != nil {
		t.Errorf("a table of empty rows keeps %+v, want no sections", all.Sections)
	}
}
