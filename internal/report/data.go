package report

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
)

func itoa(n int) string { return strconv.Itoa(n) }

func gfmt(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// csvHeader is the header of the CSV output: one line per printed cell.
var csvHeader = []string{"table", "title", "host", "threads", "section", "row", "column", "version", "step", "metric",
	"value", "state", "running", "partial", "repeats", "of", "ci_lo", "ci_hi", "p", "text", "estimated", "why", "below_target"}

// writeCSV writes every cell of every table as one line (see CSVHeader): value
// is empty unless the state is measured or both-zero ("inf" when the base
// was 0); state is measured, both-zero (a ratio of two zeros: value 1 by
// convention), not supported, not counted, missing, not computable or
// failed; running is the running fraction of multiplexed counters; ci_lo
// and ci_hi the 95% interval of the median; p the p-value of the comparison
// with the base; text the cell as the other formats print it; estimated is
// true when the value rests on an op count estimated from the client's
// whole-run rate; why says why a cell is not computable; below_target is
// true for an insert-benchmark cell marked "!" (inserts/s below 95% of the
// step's target, or the queries/s of a version that fell below it). A
// ratio of versions measured together (duet, slices: the pairs table says
// which) counts its rounds (comparisons) in repeats and of, and its ci_lo,
// ci_hi and p come from a Student t interval and test on the logarithms of
// the rounds' ratios.
func writeCSV(w io.Writer, rep *report) error { return render(w, rep, csvRenderer()) }

func csvRenderer() renderer {
	return renderer{
		begin: func(bw *bufio.Writer, _ *report) error {
			cw := csv.NewWriter(bw)
			if err := cw.Write(csvHeader); err != nil {
				return err
			}
			cw.Flush()
			return cw.Error()
		},
		table: func(bw *bufio.Writer, _ *report, t *table, _ int) error {
			cw := csv.NewWriter(bw)
			writeCSVTable(cw, t)
			cw.Flush()
			return cw.Error()
		},
		end: func(*bufio.Writer, *report) error { return nil },
	}
}

// writeCSVTable writes the cells of one table, one line each.
func writeCSVTable(cw *csv.Writer, t *table) {
	for _, s := range t.Sections {
		for _, r := range s.Rows {
			if r.Kind != rowValues && r.Kind != rowAverage {
				continue
			}
			for i, c := range r.Cells {
				if c.Empty {
					continue
				}
				col := ""
				if i < len(t.Header) {
					col = t.Header[i]
				}
				j := cellJSON(c)
				line := []string{t.ID, t.Title, t.Host, itoa(t.Threads), s.Name, r.Label, col, c.Version, c.Step, c.Metric,
					"", j.State, "", "", "", "", "", "", "", c.Text, "", c.Why, ""}
				if c.OK() && !c.word {
					line[10] = gfmt(c.Value)
					line[12] = gfmt(c.Running)
					line[13] = strconv.FormatBool(c.Partial)
					line[20] = strconv.FormatBool(c.Estimated)
					line[14], line[15] = itoa(c.N), itoa(c.Of)
					line[22] = strconv.FormatBool(c.BelowTarget)
					if c.HasCI() {
						line[16], line[17] = gfmt(c.Lo), gfmt(c.Hi)
					}
					if c.Tested {
						line[18] = gfmt(c.P)
					}
				}
				cw.Write(line)
			}
		}
	}
}

// jsonCell is a cell in the JSON output: value is null unless measured (or
// both-zero) and finite; inf marks a ratio to a base of 0; state both-zero a
// ratio of two zeros (value 1 by convention); estimated a value resting on
// an op count estimated from the client's whole-run rate; why the reason of
// a cell that is not computable; below_target an insert-benchmark cell
// marked "!" (see Cell.BelowTarget); paired the mode of a ratio of versions
// measured together (duet, slices, mixed), whose repeats and of count its
// rounds and whose interval and p come from a t test on them.
type jsonCell struct {
	Text      string   `json:"text"`
	State     string   `json:"state"`
	Why       string   `json:"why,omitempty"`
	Value     *float64 `json:"value,omitempty"`
	Inf       bool     `json:"inf,omitempty"`
	Estimated bool     `json:"estimated,omitempty"`
	Below     bool     `json:"below_target,omitempty"`
	Running   *float64 `json:"running,omitempty"`
	Partial   bool     `json:"partial,omitempty"`
	N         int      `json:"repeats,omitempty"`
	Of        int      `json:"of,omitempty"`
	Lo        *float64 `json:"ci_lo,omitempty"`
	Hi        *float64 `json:"ci_hi,omitempty"`
	P         *float64 `json:"p,omitempty"`
	Same      bool     `json:"not_significant,omitempty"`
	Paired    string   `json:"paired,omitempty"`
	Class     string   `json:"class,omitempty"`
	Version   string   `json:"version,omitempty"`
	Step      string   `json:"step,omitempty"`
	Metric    string   `json:"metric,omitempty"`
	Empty     bool     `json:"empty,omitempty"`
}

// ptr points to v, or is nil when v is not a finite number: JSON has no
// NaN or infinity.
func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func cellJSON(c tableCell) jsonCell {
	j := jsonCell{Text: c.Text, State: c.State.String(), Why: c.Why, Class: c.Class, Version: c.Version, Step: c.Step, Metric: c.Metric, Empty: c.Empty}
	switch {
	case c.Empty:
		j.State = ""
	case c.word:
		j.State = "text"
	case c.OK():
		if c.BothZero && c.Value == 1 {
			j.State = "both-zero"
		}
		j.Estimated = c.Estimated
		j.Below = c.BelowTarget
		j.Inf = math.IsInf(c.Value, 0)
		j.Value = ptr(c.Value)
		j.Running = ptr(c.Running)
		j.Partial = c.Partial
		j.N, j.Of = c.N, c.Of
		if c.HasCI() {
			j.Lo, j.Hi = ptr(c.Lo), ptr(c.Hi)
		}
		if c.Tested {
			j.P, j.Same = ptr(c.P), c.Same
		}
		j.Paired = c.Paired.String()
	default:
		j.Of = c.Of
	}
	return j
}

// MarshalJSON writes the cell in its JSON form.
func (c tableCell) MarshalJSON() ([]byte, error) { return json.Marshal(cellJSON(c)) }

// writeJSON writes the report as one indented JSON document.
func writeJSON(w io.Writer, rep *report) error { return render(w, rep, jsonRenderer()) }

// jsonRenderer writes the document MarshalIndent would write for the
// whole report, one table at a time: the report's fields around a
// "tables" array whose elements are marshalled as they come.
func jsonRenderer() renderer {
	var tail []byte
	return renderer{
		begin: func(bw *bufio.Writer, rep *report) error {
			shell := *rep
			shell.Tables = []*table{}
			b, err := json.MarshalIndent(&shell, "", "  ")
			if err != nil {
				return err
			}
			const mark = `"tables": [`
			at := bytes.Index(b, []byte(mark+"]"))
			if at < 0 {
				return errors.New("encode report: no tables field")
			}
			bw.Write(b[:at+len(mark)])
			tail = b[at+len(mark):]
			return nil
		},
		table: func(bw *bufio.Writer, _ *report, t *table, i int) error {
			b, err := json.MarshalIndent(t, "    ", "  ")
			if err != nil {
				return err
			}
			if i > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString("\n    ")
			bw.Write(b)
			return nil
		},
		end: func(bw *bufio.Writer, rep *report) error {
			if rep.count > 0 {
				bw.WriteString("\n  ")
			}
			bw.Write(tail)
			bw.WriteByte('\n')
			return nil
		},
	}
}
