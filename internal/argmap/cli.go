package argmap

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// cliTarget is what one option name sets.
type cliTarget struct {
	slot  *slot // an option or flag; or the group (with field, or whole)
	field *field
	whole bool
	arg   *manifest.Arg // the opt or flag as written in the manifest
	flag  string        // for flags: the value the name sets, "true" or "false"
	term  *manifest.Terminal
	name  string // as the user wrote it: --threads, -t
}

func (c *cliTarget) takesValue() bool { return c.flag == "" && c.term == nil }

type cliOptions struct {
	long, short map[string]*cliTarget
}

func (o *cliOptions) add(long, short string, t cliTarget) {
	if long != "" {
		lt := t
		lt.name = "--" + long
		o.long[long] = &lt
	}
	if short != "" {
		st := t
		st.name = "-" + short
		o.short[short] = &st
	}
}

func cliOptionTable(c *manifest.Command, p *plan) *cliOptions {
	o := &cliOptions{long: map[string]*cliTarget{}, short: map[string]*cliTarget{}}
	// Terminals first: an argument's option of the same name wins.
	for i := range c.Terminals {
		term := &c.Terminals[i]
		o.add(term.Long, term.Short, cliTarget{term: term})
	}
	for _, s := range p.slots {
		a := s.arg
		switch s.kind {
		case manifest.KindOpt:
			o.add(a.Long, a.Short, cliTarget{slot: s, arg: a})
		case manifest.KindFlag:
			o.add(a.Long, a.Short, cliTarget{slot: s, arg: a, flag: "true"})
			o.add(a.LongRev, "", cliTarget{slot: s, arg: a, flag: "false"})
		case manifest.KindGrp:
			if a.GroupOpt != nil {
				o.add(a.GroupOpt.Long, a.GroupOpt.Short, cliTarget{slot: s, arg: a, whole: true})
			}
			for _, f := range s.fields {
				e := f.entry
				if e == nil {
					continue
				}
				if e.Kind == manifest.KindFlag {
					o.add(e.Long, e.Short, cliTarget{slot: s, field: f, arg: e, flag: "true"})
					o.add(e.LongRev, "", cliTarget{slot: s, field: f, arg: e, flag: "false"})
				} else {
					o.add(e.Long, e.Short, cliTarget{slot: s, field: f, arg: e})
				}
			}
		}
	}
	return o
}

// FromCLI parses a command's argv (docs/spec.md §3, CLI runs) into one JSON
// value per manifest argument: positionals in order, each token read by its
// type (a quoted Str argument takes the token as the string; other types read
// it as JSON, a bare word being accepted for a Str); a variadic positional
// collects the remaining tokens, each read as the element type; `--long
// VALUE`, `--long=VALUE`, `-s VALUE`, `-sVALUE` options (an option-form
// `many` given apart from its name takes the values after it too: `--xs 1 2
// 3`, as in morloc); `--flag`/`--no-flag` flags; a group's fields as their
// own options and the whole record as JSON through its group option; `--`
// ends the options. Arguments with a source, form or check are read as morloc
// reads them (shape.go): files are read, paths checked; stdin is never read
// here (CLICall reads it). An output projection (a terminal's flag) cannot be
// expressed here: use CLICall.
func FromCLI(c *manifest.Command, argv []string) ([]json.RawMessage, error) {
	fs := osFS
	fs.stdin = noStdin{}
	args, inputs, term, err := parseCLI(c, argv, &cliReader{fs: fs})
	if err != nil {
		return nil, err
	}
	if term != nil {
		return nil, fmt.Errorf("%s: output projection %s is not available in this mode", c.Name, terminalSpelling(term))
	}
	call, err := resolve(Call{Command: c, Args: args, Inputs: inputs}, fs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	return call.Args, nil
}

// CLICall is FromCLI plus output projections: a terminal's flag (--lines)
// makes the call run that terminal's entry command with the same arguments.
func CLICall(m *manifest.Manifest, c *manifest.Command, argv []string) (Call, error) {
	rd := &cliReader{fs: osFS, arrays: true}
	args, inputs, term, err := parseCLI(c, argv, rd)
	if err != nil {
		return Call{}, err
	}
	cmd := c
	if term != nil {
		if cmd = m.Command(term.Entry); cmd == nil {
			return Call{}, fmt.Errorf("%s: output projection %s names no command '%s'", c.Name, terminalSpelling(term), term.Entry)
		}
	}
	// Files named by `source: file` values are read, and paths checked,
	// now: the CLI runs one call (the error names the argument).
	resolved, err := Resolve(Call{Command: c, Args: args, Inputs: inputs})
	if err != nil {
		return Call{}, fmt.Errorf("%s: %w", c.Name, err)
	}
	args, arrays := nonFiniteArrays(c, resolved.Args)
	return Call{Command: cmd, Args: args, Arrays: append(rd.collected, arrays...), Ret: retOf(cmd)}, nil
}

// WithDefaultProjection is the call morloc makes when the command line
// chose no output projection and the command has a `@default` one
// (phase2.rs redirect_via_terminal): that terminal's entry, with the same
// arguments. An explicit output form (-f) keeps the command's own value,
// as morloc's does; so does a call that chose its projection.
func (c Call) WithDefaultProjection(m *manifest.Manifest, cmd *manifest.Command, formExplicit bool) Call {
	if formExplicit || c.Command != cmd {
		return c
	}
	for _, t := range cmd.Terminals {
		if t.Default {
			if e := m.Command(t.Entry); e != nil {
				c.Command, c.Ret = e, retOf(e)
			}
			return c
		}
	}
	return c
}

func terminalSpelling(t *manifest.Terminal) string {
	if t.Long != "" {
		return "--" + t.Long
	}
	return "-" + t.Short
}

// takeManyValues gives an option-form `many` the values that follow its
// first one (`--xs 1 2 3`), as morloc's clap parser does (num_args(1..)):
// every token up to the next that looks like an option (a negative number
// does not) or `--`. A value attached to the option (`--xs=1`, `-x1`) takes
// no more. It returns the index of the last token taken.
func takeManyValues(t *cliTarget, argv []string, i int, set func(*cliTarget, string) error) int {
	if t.arg == nil || !t.arg.Many || t.slot == nil || t.slot.kind != manifest.KindOpt || t.field != nil {
		return i
	}
	for i+1 < len(argv) {
		next := argv[i+1]
		if next == "--" || (len(next) > 1 && next[0] == '-' && !isNegativeNumber(next)) {
			break
		}
		i++
		_ = set(t, next) // an option's value: set fails only for terminals
	}
	return i
}

type cliValue struct {
	target *cliTarget
	text   string
}

// parseCLI parses argv, reading its values with rd (which collects the
// arrays it reads when its arrays are on).
func parseCLI(c *manifest.Command, argv []string, rd *cliReader) ([]json.RawMessage, []Input, *manifest.Terminal, error) {
	if c.Fault != nil {
		return nil, nil, nil, fmt.Errorf("%s: cannot run: %s at %s", c.Name, c.Fault.Msg, c.Fault.Path)
	}
	p, err := newPlan(c)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	opts := cliOptionTable(c, p)
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s", c.Name, fmt.Sprintf(format, a...))
	}
	var positional []string
	var values []cliValue
	var term *manifest.Terminal
	set := func(t *cliTarget, text string) error {
		if t.term != nil {
			if term != nil && term != t.term {
				return fail("choose one output projection, not both %s and %s", terminalSpelling(term), terminalSpelling(t.term))
			}
			term = t.term
			return nil
		}
		values = append(values, cliValue{t, text})
		return nil
	}
	// takeValue gives option t (argv[i]) its value: the one the token held
	// (inline), else the next token and, for an option-form many, the values
	// after it. It returns the index of the last token taken.
	takeValue := func(t *cliTarget, i int, val string, inline bool) (int, error) {
		if !inline {
			if i+1 >= len(argv) {
				return i, fail("option %s needs a value", t.name)
			}
			i++
			val = argv[i]
		}
		if err := set(t, val); err != nil {
			return i, err
		}
		if !inline {
			i = takeManyValues(t, argv, i, set)
		}
		return i, nil
	}
	endOfOptions := false
	for i := 0; i < len(argv); i++ {
		tok := argv[i]
		switch {
		case endOfOptions || tok == "-" || !strings.HasPrefix(tok, "-"):
			positional = append(positional, tok)
		case tok == "--":
			endOfOptions = true
		case strings.HasPrefix(tok, "--"):
			name, val, hasVal := strings.Cut(tok[2:], "=")
			t := opts.long[name]
			if t == nil {
				return nil, nil, nil, fail("unknown option --%s (run with --help for the options)", name)
			}
			if !t.takesValue() {
				if hasVal {
					return nil, nil, nil, fail("%s takes no value", t.name)
				}
				if err := set(t, t.flag); err != nil {
					return nil, nil, nil, err
				}
				continue
			}
			if i, err = takeValue(t, i, val, hasVal); err != nil {
				return nil, nil, nil, err
			}
		default:
			t := opts.short[tok[1:2]]
			if t == nil && isNegativeNumber(tok) {
				positional = append(positional, tok)
				continue
			}
			if t == nil {
				return nil, nil, nil, fail("unknown option -%s (run with --help for the options)", tok[1:2])
			}
			if !t.takesValue() {
				// Bundled flags: -abc.
				for _, r := range tok[1:] {
					ft := opts.short[string(r)]
					if ft == nil || ft.takesValue() {
						return nil, nil, nil, fail("unknown option -%c in %s", r, tok)
					}
					if err := set(ft, ft.flag); err != nil {
						return nil, nil, nil, err
					}
				}
				continue
			}
			if i, err = takeValue(t, i, strings.TrimPrefix(tok[2:], "="), len(tok) > 2); err != nil {
				return nil, nil, nil, err
			}
		}
	}

	s := newSupplied()
	if err := supplyPositionals(c, p, s, positional, rd); err != nil {
		return nil, nil, nil, err
	}
	// Whole records first, so that a field's own option overrides the JSON.
	for _, v := range values {
		if v.target.whole {
			text, err := rd.recordText(v.text)
			if err != nil {
				return nil, nil, nil, fail("option %s: %v", v.target.name, err)
			}
			v.text = text
			if err := supplyWholeCLI(s, v); err != nil {
				return nil, nil, nil, fail("%v", err)
			}
		}
	}
	many := map[*slot][]json.RawMessage{}
	for _, v := range values {
		t := v.target
		switch {
		case t.whole:
		case t.field != nil:
			raw, msg := rd.value(t.arg, t.field.t, v.text, -1)
			if msg != "" {
				return nil, nil, nil, fail("option %s: %s", t.name, msg)
			}
			s.fields[t.field] = raw
		case t.arg.Many && t.slot.kind == manifest.KindOpt:
			elem := argType(t.arg).Elem
			raw, msg := rd.value(t.arg, elem, v.text, -1)
			if msg != "" {
				return nil, nil, nil, fail("option %s: %s", t.name, msg)
			}
			many[t.slot] = append(many[t.slot], raw)
		default:
			raw, msg := rd.value(t.arg, t.arg.T, v.text, t.slot.index)
			if msg != "" {
				return nil, nil, nil, fail("option %s: %s", t.name, msg)
			}
			s.vals[t.slot] = raw
		}
	}
	for sl, elems := range many {
		s.vals[sl] = joinArray(elems)
	}
	args, err := p.assemble(s)
	if err != nil {
		if me, ok := err.(*missingError); ok {
			return nil, nil, nil, cliMissing(c, me)
		}
		return nil, nil, nil, fail("%v", err)
	}
	return args, p.inputs(s, false), term, nil
}

func cliMissing(c *manifest.Command, me *missingError) error {
	if me.field == nil {
		return fmt.Errorf("%s: missing argument %s (usage: %s)", c.Name, posMetavar(me.slot.arg), usageLine(c))
	}
	how := ""
	if e := me.field.entry; e != nil {
		how = optSpelling(e)
	}
	if me.slot.arg.GroupOpt != nil {
		g := me.slot.arg.GroupOpt
		whole := "--" + g.Long
		if g.Long == "" {
			whole = "-" + g.Short
		}
		if how != "" {
			how += " or "
		}
		how += "a '" + me.field.key + "' field in " + whole
	}
	if how == "" {
		return fmt.Errorf("%s: field '%s' of %s has no default and no option to set it", c.Name, me.field.key, me.slot.arg.TypeName)
	}
	return fmt.Errorf("%s: missing %s (field '%s' has no default)", c.Name, how, me.field.key)
}

func joinArray(elems []json.RawMessage) json.RawMessage {
	b := []byte{'['}
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}

func supplyWholeCLI(s *supplied, v cliValue) error {
	sl := v.target.slot
	dec := json.NewDecoder(strings.NewReader(v.text))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil || dec.More() {
		return fmt.Errorf("option %s: expected a JSON object for %s, got %s", v.target.name, sl.arg.TypeName, strconv.Quote(v.text))
	}
	obj, ok := x.(map[string]any)
	if !ok {
		return fmt.Errorf("option %s: expected a JSON object for %s, got %s", v.target.name, sl.arg.TypeName, manifest.JSONKind(x))
	}
	var unknown []string
	for k := range obj {
		found := false
		for _, f := range sl.fields {
			found = found || f.key == k
		}
		if !found {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("option %s: unexpected field '%s' (expected: %s)", v.target.name, unknown[0], strings.Join(fieldKeys(sl), ", "))
	}
	s.wholeGiven[sl] = true
	for _, f := range sl.fields {
		fv, ok := obj[f.key]
		if !ok {
			continue
		}
		raw, verr := toPool(f.t, fv)
		if verr != nil {
			return fmt.Errorf("option %s: field '%s%s': %s", v.target.name, f.key, verr.Path, verr.Msg)
		}
		s.fields[f] = raw
	}
	return nil
}

func fieldKeys(sl *slot) []string {
	keys := make([]string, len(sl.fields))
	for i, f := range sl.fields {
		keys[i] = f.key
	}
	return keys
}

// supplyPositionals assigns argv tokens to the positional arguments. A
// variadic one takes every token the others leave.
func supplyPositionals(c *manifest.Command, p *plan, s *supplied, tokens []string, rd *cliReader) error {
	var pos []*slot
	manyAt := -1
	for _, sl := range p.slots {
		if sl.kind == manifest.KindPos {
			if sl.arg.Many && manyAt < 0 {
				manyAt = len(pos)
			}
			pos = append(pos, sl)
		}
	}
	required := 0
	for _, sl := range pos {
		if !isOptional(sl.arg.T) {
			required++
		}
	}
	countErr := func() error {
		var want string
		switch {
		case manyAt >= 0:
			want = fmt.Sprintf("at least %d", required)
		case required == len(pos):
			want = fmt.Sprintf("%d", required)
		default:
			want = fmt.Sprintf("%d to %d", required, len(pos))
		}
		return fmt.Errorf("%s: expected %s positional argument(s), got %d (usage: %s)", c.Name, want, len(tokens), usageLine(c))
	}
	if len(tokens) < required || (manyAt < 0 && len(tokens) > len(pos)) {
		return countErr()
	}
	parse := func(sl *slot, t *manifest.Type, tok string) (json.RawMessage, error) {
		index := -1
		if t == sl.arg.T {
			index = sl.index // the whole argument, not an element of a variadic one
		}
		raw, msg := rd.value(sl.arg, t, tok, index)
		if msg != "" {
			return nil, fmt.Errorf("%s: argument %s: %s", c.Name, posMetavar(sl.arg), msg)
		}
		return raw, nil
	}
	if manyAt < 0 {
		for i, tok := range tokens {
			raw, err := parse(pos[i], pos[i].arg.T, tok)
			if err != nil {
				return err
			}
			s.vals[pos[i]] = raw
		}
		return nil
	}
	// Tokens before the variadic argument, the variadic run, then the rest.
	after := len(pos) - manyAt - 1
	runEnd := len(tokens) - after
	if runEnd < manyAt {
		return countErr()
	}
	for i := 0; i < manyAt; i++ {
		raw, err := parse(pos[i], pos[i].arg.T, tokens[i])
		if err != nil {
			return err
		}
		s.vals[pos[i]] = raw
	}
	many := pos[manyAt]
	elem := argType(many.arg).Elem
	var elems []json.RawMessage
	for _, tok := range tokens[manyAt:runEnd] {
		raw, err := parse(many, elem, tok)
		if err != nil {
			return err
		}
		elems = append(elems, raw)
	}
	if len(elems) == 0 && !isOptional(many.arg.T) {
		return countErr()
	}
	s.vals[many] = joinArray(elems)
	for i := 0; i < after; i++ {
		sl := pos[manyAt+1+i]
		raw, err := parse(sl, sl.arg.T, tokens[runEnd+i])
		if err != nil {
			return err
		}
		s.vals[sl] = raw
	}
	return nil
}
