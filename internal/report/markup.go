package report

import (
	"bufio"
	"html"
	"strings"
)

// labelHeader is the heading of the label column in Markdown and HTML.
func labelHeader(t *table) string {
	if t.LabelHeader != "" {
		return t.LabelHeader
	}
	if t.ID == tableThreads {
		return "concurrency"
	}
	return "step"
}

// showSections reports whether section names are printed as rows.
func showSections(t *table) bool {
	named := 0
	for _, s := range t.Sections {
		if s.Name != "" {
			named++
		}
	}
	return named > 1 || t.sectionNames
}

// mdEscape writes s as Markdown text: a table's bars and the markers
// that would format (~, *, a backslash, a code span, a link's "]("), and
// HTML, which Markdown passes through: a version named
// "<script>...</script>" prints as text, not as a script a viewer runs.
func mdEscape(s string) string {
	return mdEscaper.Replace(s)
}

var mdEscaper = strings.NewReplacer("\\", `\\`, "|", `\|`, "~", `\~`, "*", `\*`, "`", "\\`", "](", `]\(`, "&", "&amp;", "<", "&lt;")

func markdownRenderer() renderer {
	return renderer{
		begin: func(bw *bufio.Writer, rep *report) error {
			if !rep.bare {
				for _, n := range rep.Notes {
					bw.WriteString("- " + mdEscape(n) + "\n")
				}
				if len(rep.Notes) > 0 && rep.count > 0 {
					bw.WriteString("\n")
				}
			}
			return nil
		},
		table: func(bw *bufio.Writer, rep *report, t *table, i int) error {
			if i > 0 {
				bw.WriteString("\n")
			}
			writeMarkdownTable(bw, t, rep.bare)
			return nil
		},
		end: func(bw *bufio.Writer, rep *report) error {
			if len(rep.Warnings) > 0 && !rep.bare {
				bw.WriteString("\n### Warnings\n\n")
				for _, w := range rep.Warnings {
					bw.WriteString("- " + mdEscape(w) + "\n")
				}
			}
			return nil
		},
	}
}

// writeMarkdownTable writes one table; bare leaves out its heading,
// preamble and notes.
func writeMarkdownTable(bw *bufio.Writer, t *table, bare bool) {
	if !bare {
		bw.WriteString("### " + mdEscape(t.Title) + "\n\n")
		for _, p := range t.Preamble {
			bw.WriteString("- " + mdEscape(p) + "\n")
		}
		if len(t.Preamble) > 0 {
			bw.WriteString("\n")
		}
	}
	bw.WriteString("| " + mdEscape(labelHeader(t)))
	for _, h := range t.Header {
		bw.WriteString(" | " + mdEscape(h))
	}
	bw.WriteString(" |\n|---")
	for range t.Header {
		bw.WriteString("|---")
	}
	bw.WriteString("|\n")
	empty := strings.Repeat(" |", len(t.Header))
	for _, s := range t.Sections {
		if showSections(t) && s.Name != "" {
			bw.WriteString("| **" + mdEscape(s.Name) + "** |" + empty + "\n")
		}
		for _, r := range s.Rows {
			switch r.Kind {
			case rowRule:
				continue
			case rowHeading:
				bw.WriteString("| *" + mdEscape(strings.TrimPrefix(r.Label, "- ")) + "* |" + empty + "\n")
				continue
			}
			label := mdEscape(r.Label)
			if r.Kind == rowAverage {
				label = "**" + label + "**"
			}
			bw.WriteString("| " + label)
			for _, c := range r.Cells {
				bw.WriteString(" | " + mdEscape(c.Text))
			}
			bw.WriteString(" |\n")
		}
	}
	if len(t.Notes) > 0 && !bare {
		bw.WriteString("\n")
		for _, n := range t.Notes {
			bw.WriteString("- " + mdEscape(n) + "\n")
		}
	}
}

// Background colours of the HTML cells.
var htmlColours = map[string]string{
	"yellow": "#ffff99",
	"blue":   "#99ccff",
	"red":    "#ff9999",
	"green":  "#99ee99",
	"grey":   "#d9d9d9",
}

const htmlHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>perfbench report</title>
<style>
body { font-family: sans-serif; margin: 1em 2em; }
table { border-collapse: collapse; margin: 0.5em 0 1em 0; }
th, td { border: 1px solid #999; padding: 2px 6px; text-align: right; font-family: monospace; white-space: nowrap; }
th.l, td.l { text-align: left; }
tr.section td { text-align: left; font-weight: bold; background: #eee; }
tr.average td { font-weight: bold; }
p.pre { font-family: monospace; margin: 0; }
ul.notes { font-size: smaller; }
</style>
</head>
<body>
`

func htmlRenderer() renderer {
	e := html.EscapeString
	return renderer{
		begin: func(bw *bufio.Writer, rep *report) error {
			if rep.bare {
				return nil
			}
			bw.WriteString(htmlHead)
			bw.WriteString("<h1>perfbench report</h1>\n")
			bw.WriteString("<p>Base version: " + e(rep.Base) + ". Relative values: " +
				colourSpan("yellow", "worse than the base by more than 5%") + ", " + colourSpan("blue", "better by more than 5%") +
				": for o/s, QPS and IPC (higher is better) yellow below 0.95 and blue above 1.05; for costs per operation " +
				"(cpu/o, cs/o, r/o, rKB/o, wKB/o, counters per operation, CPI: lower is better) yellow above 1.05 and blue below 0.95" +
				". Absolute values, among the versions of one step: " + colourSpan("green", "best quarter of the range") + ", " +
				colourSpan("red", "worst quarter") + " (no red when the smallest is at least 80% of the largest).</p>\n")
			writeHTMLNotes(bw, rep.Notes)
			return nil
		},
		table: func(bw *bufio.Writer, rep *report, t *table, _ int) error {
			if rep.bare {
				writeHTMLTable(bw, t)
				return nil
			}
			bw.WriteString("<h2>" + e(t.Title) + "</h2>\n")
			for _, p := range t.Preamble {
				bw.WriteString(`<p class="pre">` + e(p) + "</p>\n")
			}
			writeHTMLTable(bw, t)
			writeHTMLNotes(bw, t.Notes)
			return nil
		},
		end: func(bw *bufio.Writer, rep *report) error {
			if rep.bare {
				return nil
			}
			if len(rep.Warnings) > 0 {
				bw.WriteString("<h2>Warnings</h2>\n<ul>\n")
				for _, w := range rep.Warnings {
					bw.WriteString("<li>" + e(w) + "</li>\n")
				}
				bw.WriteString("</ul>\n")
			}
			bw.WriteString("</body>\n</html>\n")
			return nil
		},
	}
}

// writeHTMLNotes writes notes as a list, nothing when there are none.
func writeHTMLNotes(bw *bufio.Writer, notes []string) {
	if len(notes) == 0 {
		return
	}
	bw.WriteString("<ul class=\"notes\">\n")
	for _, n := range notes {
		bw.WriteString("<li>" + html.EscapeString(n) + "</li>\n")
	}
	bw.WriteString("</ul>\n")
}

// writeHTMLTable writes the <table> element of t; its cells carry their
// colours inline.
func writeHTMLTable(bw *bufio.Writer, t *table) {
	e := html.EscapeString
	bw.WriteString("<table>\n<tr><th class=\"l\">" + e(labelHeader(t)) + "</th>")
	for _, h := range t.Header {
		bw.WriteString("<th>" + e(h) + "</th>")
	}
	bw.WriteString("</tr>\n")
	span := len(t.Header) + 1
	for _, s := range t.Sections {
		if showSections(t) && s.Name != "" {
			bw.WriteString("<tr class=\"section\"><td colspan=\"" + itoa(span) + "\">" + e(s.Name) + "</td></tr>\n")
		}
		for _, r := range s.Rows {
			switch r.Kind {
			case rowRule:
				continue
			case rowHeading:
				bw.WriteString("<tr class=\"section\"><td colspan=\"" + itoa(span) + "\">" + e(strings.TrimPrefix(r.Label, "- ")) + "</td></tr>\n")
				continue
			case rowAverage:
				bw.WriteString("<tr class=\"average\">")
			default:
				bw.WriteString("<tr>")
			}
			bw.WriteString("<td class=\"l\">" + e(r.Label) + "</td>")
			for _, c := range r.Cells {
				if bg, ok := htmlColours[c.Class]; ok {
					bw.WriteString("<td style=\"background:" + bg + "\">" + e(c.Text) + "</td>")
				} else {
					bw.WriteString("<td>" + e(c.Text) + "</td>")
				}
			}
			bw.WriteString("</tr>\n")
		}
	}
	bw.WriteString("</table>\n")
}

func colourSpan(class, text string) string {
	return `<span style="background:` + htmlColours[class] + `">` + html.EscapeString(text) + "</span>"
}
