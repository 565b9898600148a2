package perfevent

import (
	"fmt"
	"github.com/perfbench/perfbench/internal/textdist"
	"path"
	"sort"
	"strconv"
	"strings"
)

// List is a parsed event list.
type List struct {
	// Events are in the order the user gave them; a tracepoint glob
	// ("sched:sched_*") expands in place, sorted.
	Events []Event
	// Groups lists, for each {...} group, the indexes in Events of its
	// members, in order. Events outside braces are in no group.
	Groups [][]int
}

// Parse parses a perf-style event list such as
//
//	cycles,instructions:u,{L1-dcache-loads,L1-dcache-load-misses},msr/tsc/,sched:sched_switch
//
// and resolves every event on sys (which may be nil: then only catalogue
// and raw events resolve, as on a CPU with one core PMU named "cpu").
//
// It takes what perf stat -e takes for counting: generic hardware, cache and
// software events with perf's spellings, rNNNN raw events, PMU events
// pmu/term=value,.../ and pmu/alias/ from sysfs, tracepoints sub:name (glob
// patterns allowed), the modifiers u, k, h, G, H, I, D and e after ':' (or
// right after a PMU event's closing '/'), and {...} groups with optional
// group modifiers. Errors wrap errUnknownEvent (with the nearest known
// name), ErrSyntax (saying which term is wrong and what is allowed) or
// ErrNotSupported (the PMU or tracefs is not on this machine).
func Parse(spec string, sys *System) (List, error) {
	var l List
	items, err := splitList(spec)
	if err != nil {
		return List{}, err
	}
	for _, it := range items {
		if !it.group {
			evs, err := parseEvent(it.text, sys)
			if err != nil {
				return List{}, err
			}
			l.Events = append(l.Events, evs...)
			continue
		}
		if strings.TrimSpace(it.text) == "" {
			return List{}, syntaxf("empty group {} in %q", spec)
		}
		members, err := splitList(it.text)
		if err != nil {
			return List{}, err
		}
		var idx []int
		for _, m := range members {
			if m.group {
				return List{}, syntaxf("group inside a group in %q: braces do not nest", spec)
			}
			text := m.text
			if it.mods != "" {
				text = appendModifiers(text, it.mods)
			}
			evs, err := parseEvent(text, sys)
			if err != nil {
				return List{}, err
			}
			for _, e := range evs {
				idx = append(idx, len(l.Events))
				l.Events = append(l.Events, e)
			}
		}
		l.Groups = append(l.Groups, idx)
	}
	seen := map[string]bool{}
	for _, e := range l.Events {
		name := e.Canonical
		if name == "" {
			name = e.Name
		}
		if seen[name] {
			return List{}, syntaxf("%s is listed twice in %q (cs, faults, migrations and the like are other spellings of the same events): give each event once", name, spec)
		}
		seen[name] = true
	}
	if len(l.Events) == 0 {
		return List{}, syntaxf("no events in %q", spec)
	}
	return l, nil
}

// item is one top-level element of an event list: an event, or a group
// with the text inside its braces and its modifiers.
type item struct {
	text  string
	group bool
	mods  string
}

// splitList splits an event list at the commas that are outside PMU terms
// (/.../) and braces.
func splitList(spec string) ([]item, error) {
	var out []item
	start, depth, inSlash := 0, 0, false
	groupStart := -1
	flush := func(end int) error {
		text := strings.TrimSpace(spec[start:end])
		if groupStart >= 0 {
			inner := spec[groupStart+1 : strings.LastIndexByte(spec[:end], '}')]
			after := strings.TrimSpace(spec[strings.LastIndexByte(spec[:end], '}')+1 : end])
			mods := ""
			if after != "" {
				if !strings.HasPrefix(after, ":") || len(after) == 1 {
					return syntaxf("unexpected %q after group {%s} in %q: a group may only be followed by :MODIFIERS", after, inner, spec)
				}
				mods = after[1:]
				if _, err := parseModifiers(mods); err != nil {
					return err
				}
			}
			out = append(out, item{text: inner, group: true, mods: mods})
			groupStart = -1
			return nil
		}
		if text == "" {
			return syntaxf("empty event name in %q", spec)
		}
		out = append(out, item{text: text})
		return nil
	}
	for i := 0; i < len(spec); i++ {
		c := spec[i]
		switch {
		case c == '/':
			inSlash = !inSlash
		case inSlash:
		case c == '{':
			if depth > 0 {
				return nil, syntaxf("group inside a group in %q: braces do not nest", spec)
			}
			if strings.TrimSpace(spec[start:i]) != "" {
				return nil, syntaxf("unexpected '{' after %q in %q", strings.TrimSpace(spec[start:i]), spec)
			}
			depth++
			groupStart = i
		case c == '}':
			if depth == 0 {
				return nil, syntaxf("unbalanced '}' in %q", spec)
			}
			depth--
		case c == ',' && depth == 0:
			if err := flush(i); err != nil {
				return nil, err
			}
			start = i + 1
		}
	}
	if inSlash {
		return nil, syntaxf("unterminated PMU event in %q: terms go between two slashes, as in cpu/event=0x3c/", spec)
	}
	if depth != 0 {
		return nil, syntaxf("unbalanced '{' in %q", spec)
	}
	if strings.TrimSpace(spec) == "" {
		return nil, syntaxf("empty event list")
	}
	if err := flush(len(spec)); err != nil {
		return nil, err
	}
	return out, nil
}

// appendModifiers adds group modifiers to a member's text: after its own
// modifiers, or as a new ":mods" suffix (PMU events take them right after
// the closing slash).
func appendModifiers(text, mods string) string {
	// own is the member's modifiers; a letter it already has is not added
	// again (perf refuses a modifier given twice).
	own, sep := "", ":"
	if i := strings.LastIndexByte(text, '/'); i >= 0 {
		own, sep = text[i+1:], "" // pmu/terms/MODS
	} else if head, rest, ok := strings.Cut(text, ":"); ok {
		if _, isSym, _ := lookupCatalog(head); isSym || isRaw(head) {
			own, sep = rest, ""
		} else if _, tm, ok := strings.Cut(rest, ":"); ok {
			own, sep = tm, "" // sub:name:MODS
		}
	}
	for _, c := range mods {
		if !strings.ContainsRune(own, c) {
			text += sep + string(c)
			own += string(c)
			sep = ""
		}
	}
	return text
}

// parseEvent parses one event (no commas outside PMU terms). It returns
// more than one event only for a tracepoint glob.
func parseEvent(text string, sys *System) ([]Event, error) {
	if strings.ContainsAny(text, "{}") {
		return nil, syntaxf("unexpected brace in event %q", text)
	}
	if strings.ContainsAny(text, " \t\n") {
		return nil, syntaxf("space inside event %q", text)
	}
	if i := strings.IndexByte(text, '/'); i >= 0 {
		e, err := parsePMUEvent(text, i, sys)
		if err != nil {
			return nil, err
		}
		return []Event{e}, nil
	}
	head, mods, hasMods := strings.Cut(text, ":")
	if toolEvents[head] {
		return nil, fmt.Errorf("%s is a perf stat tool event, not a kernel counter; perfbench measures the window's length itself: %w", head, ErrNotSupported)
	}
	if strings.HasPrefix(head, "mem") && hasMods && (strings.HasPrefix(mods, "0x") || strings.HasPrefix(mods, "0X")) {
		return nil, fmt.Errorf("breakpoint event %q: hardware breakpoints are not supported by perfbench: %w", text, ErrNotSupported)
	}
	entry, isSym, err := lookupCatalog(head)
	if err != nil {
		return nil, err
	}
	if isSym || isRaw(head) {
		m, err := parseModifiers(mods)
		if err != nil {
			return nil, fmt.Errorf("event %q: %w", text, err)
		}
		if hasMods && mods == "" {
			return nil, syntaxf("event %q ends with ':' but has no modifiers (u, k, h, G, H, I, D, e)", text)
		}
		suffix := ""
		if hasMods {
			suffix = ":" + mods
		}
		var e Event
		if isSym {
			e = genericEvent(entry, sys)
		} else {
			e, err = rawEvent(head, sys)
			if err != nil {
				return nil, err
			}
		}
		e.Name = head + suffix
		e.Canonical = e.Canonical + suffix
		e.Modifiers = m
		return []Event{e}, nil
	}
	if !hasMods {
		return nil, unknownEvent(head, sys)
	}
	// sub:name or sub:name:mods: a tracepoint, unless sub is no tracefs
	// subsystem and what follows reads as modifiers (a misspelt event).
	name, tmods, hasTMods := strings.Cut(mods, ":")
	if !hasTMods && looksLikeModifiers(mods) && !sys.hasTraceSubsystem(head) {
		return nil, unknownEvent(head, sys)
	}
	return parseTracepoint(head, name, tmods, hasTMods, text, sys)
}

// hasTraceSubsystem reports whether tracefs has subsystem sub (any, for a
// glob pattern).
func (s *System) hasTraceSubsystem(sub string) bool {
	if s == nil || s.TraceFS == "" {
		return false
	}
	if strings.ContainsAny(sub, "*?[") {
		return true
	}
	for _, n := range s.tracepointNames("") {
		if n == sub {
			return true
		}
	}
	return false
}

func looksLikeModifiers(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("ukhGHIDepPSWb", c) {
			return false
		}
	}
	return true
}

// isRaw reports whether name is a raw event rNNNN (1 to 16 hex digits).
func isRaw(name string) bool {
	if len(name) < 2 || len(name) > 17 || name[0] != 'r' {
		return false
	}
	for _, c := range name[1:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// genericEvent builds a generic hardware, cache or software event. On a
// hybrid CPU a hardware or cache event gets one encoding per core PMU, with
// the PMU's type in config bits 32-63.
func genericEvent(c catalogEntry, sys *System) Event {
	e := Event{Kind: c.Kind, Canonical: c.Name, Unit: c.Unit}
	switch c.Kind {
	case KindSoftware:
		e.Encodings = []Encoding{{PMU: "software", Type: typeSoftware, Config: c.Config}}
	default:
		e.Encodings = coreEncodings(c.Type(), c.Config, sys)
	}
	return e
}

// coreEncodings returns the encodings of a generic hardware or cache event:
// one on a CPU with a single core PMU (or none), one per core PMU with the
// extended type on hybrid CPUs.
func coreEncodings(typ uint32, config uint64, sys *System) []Encoding {
	cores := sys.CorePMUs()
	switch len(cores) {
	case 0:
		return []Encoding{{PMU: "cpu", Type: typ, Config: config}}
	case 1:
		return []Encoding{{PMU: cores[0].Name, Type: typ, Config: config}}
	}
	out := make([]Encoding, len(cores))
	for i, p := range cores {
		out[i] = Encoding{PMU: p.Name, Type: typ, Config: uint64(p.Type)<<pmuTypeShift | config}
	}
	return out
}

// rawEvent builds rNNNN: PERF_TYPE_RAW on the core PMU; on hybrid CPUs, as
// perf does, the raw code is opened on each core PMU with that PMU's type.
func rawEvent(name string, sys *System) (Event, error) {
	v, err := strconv.ParseUint(name[1:], 16, 64)
	if err != nil {
		return Event{}, syntaxf("raw event %q: %v", name, err)
	}
	e := Event{Kind: KindRaw, Canonical: name}
	cores := sys.CorePMUs()
	switch len(cores) {
	case 0:
		e.Encodings = []Encoding{{PMU: "cpu", Type: typeRaw, Config: v}}
	case 1:
		e.Encodings = []Encoding{{PMU: cores[0].Name, Type: typeRaw, Config: v}}
	default:
		for _, p := range cores {
			e.Encodings = append(e.Encodings, Encoding{PMU: p.Name, Type: p.Type, Config: v})
		}
	}
	return e, nil
}

// parseModifiers parses the letters after ':' with perf's rules: the first
// of u, k, h excludes the other privilege levels and each of them includes
// its own; G and H likewise for guest and host. perf also sets exclude_guest
// for u; perfbench does not (it only matters for KVM guest code, and PMUs
// such as msr reject it).
func parseModifiers(s string) (modifiers, error) {
	var m modifiers
	exclude, excludeGH := false, false
	for i, c := range s {
		if c != 'p' && strings.ContainsRune(s[i+1:], c) {
			return m, syntaxf("modifier %q given twice in %q", string(c), s)
		}
		switch c {
		case 'u', 'k', 'h':
			if !exclude {
				exclude = true
				m.ExcludeUser, m.ExcludeKernel, m.ExcludeHV = true, true, true
			}
			switch c {
			case 'u':
				m.ExcludeUser = false
			case 'k':
				m.ExcludeKernel = false
			case 'h':
				m.ExcludeHV = false
			}
		case 'G', 'H':
			if !excludeGH {
				excludeGH = true
				m.ExcludeGuest, m.ExcludeHost = true, true
			}
			if c == 'G' {
				m.ExcludeGuest = false
			} else {
				m.ExcludeHost = false
			}
		case 'I':
			m.ExcludeIdle = true
		case 'D':
			m.Pinned = true
		case 'e':
			m.Exclusive = true
		case 'p', 'P':
			return m, syntaxf("modifier %q asks for precise sampling; perfbench counts, it does not sample (allowed: u, k, h, G, H, I, D, e)", string(c))
		case 'S', 'W', 'b':
			return m, syntaxf("modifier %q is a perf record/stat option perfbench does not take (allowed: u, k, h, G, H, I, D, e)", string(c))
		default:
			return m, syntaxf("unknown modifier %q (allowed: u user, k kernel, h hypervisor, G guest, H host, I no idle, D pinned, e exclusive)", string(c))
		}
	}
	return m, nil
}

// parsePMUEvent parses pmu/terms/mods; slash is the index of the first '/'.
func parsePMUEvent(text string, slash int, sys *System) (Event, error) {
	pmuName := text[:slash]
	rest := text[slash+1:]
	end := strings.IndexByte(rest, '/')
	if end < 0 {
		return Event{}, syntaxf("PMU event %q has no closing '/': write %s/TERMS/", text, pmuName)
	}
	terms, mods := rest[:end], rest[end+1:]
	if strings.HasPrefix(mods, ":") {
		return Event{}, syntaxf("PMU event %q: modifiers go right after the closing slash, without ':' (%s/%s/%s)", text, pmuName, terms, mods[1:])
	}
	if strings.ContainsAny(mods, "/:") {
		return Event{}, syntaxf("PMU event %q: unexpected %q after the closing slash (only modifiers u, k, h, G, H, I, D, e may follow)", text, mods)
	}
	m, err := parseModifiers(mods)
	if err != nil {
		return Event{}, fmt.Errorf("event %q: %w", text, err)
	}
	if pmuName == "" {
		return Event{}, syntaxf("PMU event %q has no PMU name before '/'", text)
	}
	p := sys.PMU(pmuName)
	if p == nil {
		return Event{}, unknownPMU(pmuName, text, sys)
	}
	if terms == "" {
		return Event{}, syntaxf("PMU event %q has no terms between the slashes: give an event name from %s/events/ or terms from %s/format/ (%s)", text, p.Name, p.Name, p.allowedTerms())
	}
	e := Event{Kind: KindPMU, Name: text, Canonical: text, Modifiers: m}
	var words [3]uint64
	var generic *Event
	for _, term := range strings.Split(terms, ",") {
		if term == "" {
			return Event{}, syntaxf("PMU event %q has an empty term", text)
		}
		key, val, hasVal := strings.Cut(term, "=")
		if !hasVal {
			if a, ok := p.Aliases[strings.ToLower(key)]; ok {
				if err := p.applyAlias(&words, a, text); err != nil {
					return Event{}, err
				}
				e.Unit, e.Scale = a.Unit, a.Scale
				continue
			}
			if _, ok := p.Formats[key]; ok {
				val = "1"
			} else if c, isSym, err := lookupCatalog(key); err == nil && isSym && c.Kind != KindSoftware && p.Core {
				// cpu_atom/cycles/: a generic event on one core PMU.
				if len(strings.Split(terms, ",")) != 1 {
					return Event{}, syntaxf("PMU event %q: generic event %s cannot be combined with other terms", text, key)
				}
				ge := genericOn(c, p, sys)
				generic = &ge
				continue
			} else {
				return Event{}, unknownTerm(p, key, text)
			}
		}
		if _, ok := p.Formats[key]; !ok && key != "config" && key != "config1" && key != "config2" {
			return Event{}, p.applyTerm(&words, key, 0, text) // says why key is refused
		}
		v, err := parseTermValue(val)
		if err != nil {
			return Event{}, syntaxf("PMU event %q: term %s: value %q is not a number (decimal or 0x hex)", text, key, val)
		}
		if err := p.applyTerm(&words, key, v, text); err != nil {
			return Event{}, err
		}
	}
	if generic != nil {
		generic.Name, generic.Canonical, generic.Modifiers = text, text, m
		return *generic, nil
	}
	e.Encodings = []Encoding{{PMU: p.Name, Type: p.Type, Config: words[0], Config1: words[1], Config2: words[2]}}
	return e, nil
}

// genericOn is a generic hardware or cache event on one core PMU.
func genericOn(c catalogEntry, p *PMU, sys *System) Event {
	config := c.Config
	if sys.Hybrid() {
		config |= uint64(p.Type) << pmuTypeShift
	}
	return Event{Kind: c.Kind, Encodings: []Encoding{{PMU: p.Name, Type: c.Type(), Config: config}}}
}

// parseTermValue reads a term value as perf does: 0x hex or decimal.
func parseTermValue(s string) (uint64, error) {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return strconv.ParseUint(s[2:], 16, 64)
	}
	return strconv.ParseUint(s, 10, 64)
}

// applyTerm sets one term: a format/ term, or config, config1, config2.
func (p *PMU) applyTerm(words *[3]uint64, key string, v uint64, text string) error {
	if f, ok := p.Formats[key]; ok {
		if err := f.apply(words, v); err != nil {
			return syntaxf("PMU event %q: term %s: %v", text, key, err)
		}
		return nil
	}
	for i, w := range wordNames {
		if key == w {
			words[i] = v
			return nil
		}
	}
	switch key {
	case "name":
		return syntaxf("PMU event %q: name= is not supported; perfbench names the event as you wrote it", text)
	case "period", "freq", "branch_type", "time", "call-graph", "stack-size", "inherit", "no-inherit",
		"max-stack", "nr", "overwrite", "no-overwrite", "driver-config", "percore", "aux-output",
		"aux-sample-size", "metric-id", "raw", "legacy-cache", "hardware":
		return syntaxf("PMU event %q: term %s is a perf record option perfbench does not take (allowed: %s)", text, key, p.allowedTerms())
	}
	return unknownTerm(p, key, text)
}

// applyAlias applies the terms of an events/ alias ("event=0x3c,umask=0x00").
func (p *PMU) applyAlias(words *[3]uint64, a alias, text string) error {
	if a.Terms == "" {
		return syntaxf("PMU event %q: alias %s/events/%s is empty", text, p.Name, a.Name)
	}
	for _, term := range strings.Split(a.Terms, ",") {
		if term == "" {
			continue
		}
		key, val, hasVal := strings.Cut(term, "=")
		if !hasVal {
			val = "1"
		}
		if val == "?" {
			return syntaxf("PMU event %q: alias %s needs a value for %s: write %s/%s,%s=N/", text, a.Name, key, p.Name, a.Name, key)
		}
		v, err := parseTermValue(val)
		if err != nil {
			return fmt.Errorf("PMU event %q: alias %s/events/%s: term %s has value %q, not a number: %w", text, p.Name, a.Name, key, val, errSyntax)
		}
		if err := p.applyTerm(words, key, v, text); err != nil {
			return err
		}
	}
	return nil
}

// allowedTerms lists what may go between a PMU's slashes.
func (p *PMU) allowedTerms() string {
	var f []string
	for k := range p.Formats {
		f = append(f, k)
	}
	sort.Strings(f)
	s := "format/ allows " + strings.Join(f, ", ")
	if len(f) == 0 {
		s = "format/ is empty"
	}
	s += "; also config, config1, config2"
	if len(p.Aliases) > 0 {
		s += fmt.Sprintf("; or one of the %d names in events/", len(p.Aliases))
	}
	return s
}

func unknownTerm(p *PMU, key, text string) error {
	var cands []string
	for k := range p.Formats {
		cands = append(cands, k)
	}
	for _, a := range p.Aliases {
		cands = append(cands, a.Name)
	}
	cands = append(cands, wordNames...)
	hint := ""
	if best := nearest(key, cands); best != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", best)
	}
	return syntaxf("PMU event %q: unknown term %q for PMU %s%s; %s", text, key, p.Name, hint, p.allowedTerms())
}

func unknownPMU(name, text string, sys *System) error {
	names := sys.PMUNames()
	hint := ""
	if best := nearest(name, names); best != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", best)
	}
	if name == "cpu" && !sys.HasHardwarePMU() && sys != nil {
		return fmt.Errorf("event %q: this machine has no hardware PMU (no %s/cpu; PMUs here: %s): %w", text, devicesDir, strings.Join(names, ", "), ErrNotSupported)
	}
	if strings.HasPrefix(name, "cpu") && sys.Hybrid() {
		var cores []string
		for _, p := range sys.CorePMUs() {
			cores = append(cores, p.Name)
		}
		return fmt.Errorf("event %q: no PMU %q; this hybrid CPU's core PMUs are %s: %w", text, name, strings.Join(cores, " and "), ErrNotSupported)
	}
	if len(names) == 0 {
		return fmt.Errorf("event %q: no PMU %q (no PMUs known): %w", text, name, ErrNotSupported)
	}
	return fmt.Errorf("event %q: no PMU %q on this machine%s (PMUs here: %s): %w", text, name, hint, strings.Join(names, ", "), ErrNotSupported)
}

// parseTracepoint resolves sub:name (globs allowed) with optional modifiers.
func parseTracepoint(sub, name, mods string, hasMods bool, text string, sys *System) ([]Event, error) {
	if name == "" {
		return nil, syntaxf("tracepoint %q has no event name after ':' (write subsystem:event, e.g. sched:sched_switch)", text)
	}
	m, err := parseModifiers(mods)
	if err != nil {
		return nil, fmt.Errorf("event %q: %w", text, err)
	}
	if hasMods && mods == "" {
		return nil, syntaxf("event %q ends with ':' but has no modifiers", text)
	}
	suffix := ""
	if hasMods {
		suffix = ":" + mods
	}
	var pairs [][2]string
	if strings.ContainsAny(sub+name, "*?[") {
		if sys == nil || sys.TraceFS == "" {
			return nil, fmt.Errorf("tracepoint %q: %w: %w", text, errNoTraceFS, ErrNotSupported)
		}
		for _, s := range sys.tracepointNames("") {
			if ok, err := path.Match(sub, s); err != nil {
				return nil, syntaxf("tracepoint pattern %q: %v", text, err)
			} else if !ok {
				continue
			}
			for _, n := range sys.tracepointNames(s) {
				if ok, _ := path.Match(name, n); ok {
					pairs = append(pairs, [2]string{s, n})
				}
			}
		}
		if len(pairs) == 0 {
			return nil, fmt.Errorf("tracepoint pattern %q matches no tracepoint in %s: %w", sub+":"+name, sys.TraceFS, errUnknownEvent)
		}
	} else {
		pairs = [][2]string{{sub, name}}
	}
	var out []Event
	for _, pr := range pairs {
		id, err := sys.TracepointID(pr[0], pr[1])
		if err != nil {
			return nil, err
		}
		n := pr[0] + ":" + pr[1] + suffix
		out = append(out, Event{
			Name:      n,
			Canonical: n,
			Kind:      kindTracepoint,
			Encodings: []Encoding{{PMU: "tracepoint", Type: typeTracepoint, Config: id}},
			Modifiers: m,
		})
	}
	return out, nil
}

// unknownEvent builds the error for a name that is nothing known, with the
// nearest known name.
func unknownEvent(name string, sys *System) error {
	// suggest maps a candidate spelling to what to suggest for it: a PMU
	// alias typed without its PMU is suggested as pmu/alias/.
	suggest := map[string]string{}
	for _, c := range catalog() {
		suggest[c.Name] = c.Name
		for _, a := range c.Aliases {
			suggest[a] = a
		}
	}
	if sys != nil {
		for _, p := range sys.PMUs {
			for _, a := range p.Aliases {
				full := p.Name + "/" + a.Name + "/"
				suggest[full] = full
				if _, taken := suggest[a.Name]; !taken {
					suggest[a.Name] = full
				}
			}
		}
	}
	cands := make([]string, 0, len(suggest))
	for c := range suggest {
		cands = append(cands, c)
	}
	sort.Strings(cands)
	if best := nearest(name, cands); best != "" {
		return fmt.Errorf("%w %q (did you mean %q?)", errUnknownEvent, name, suggest[best])
	}
	return fmt.Errorf("%w %q (run 'perfbench events' for the list)", errUnknownEvent, name)
}

// nearest returns the candidate closest to s, ignoring case, if it is close
// enough (a third of s) to be a likely typo.
func nearest(s string, cands []string) string {
	lower := make([]string, len(cands))
	orig := make(map[string]string, len(cands))
	for i, c := range cands {
		lower[i] = strings.ToLower(c)
		if o, ok := orig[lower[i]]; !ok || c < o {
			orig[lower[i]] = c
		}
	}
	return orig[textdist.Nearest(strings.ToLower(s), lower, max(1, len(s)/3))]
}

func syntaxf(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), errSyntax)
}
