package record

import "fmt"

// The text bridge: producers that still build warnings as sentences add
// them through Warn and WarnText, which give each its code by the rules that
// convert schema-1 Records (schema1.go). It is temporary: once every
// producer builds typed warnings (AddWarning, Warnf), it is removed, and the
// wording of a warning means nothing to any reader.

// Warn adds a warning formatted as by fmt.Sprintf, its code and events read
// from its wording as for a schema-1 Record.
//
// Temporary (the text bridge): producers add typed warnings with Warnf or
// AddWarning.
func (r *Record) Warn(format string, args ...any) {
	r.WarnText(fmt.Sprintf(format, args...))
}

// WarnText adds warnings given as texts, each with its code and events read
// from its wording as for a schema-1 Record.
//
// Temporary (the text bridge): producers add typed warnings with Warnf or
// AddWarning.
func (r *Record) WarnText(texts ...string) {
	for _, t := range texts {
		r.AddWarning(classify(t, r.Ops.Source))
	}
}
