package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
)

// Run evaluates the program on one JSON value per manifest argument (the
// positional values nexus sends a pool: a record or a record-unrolled
// group as an object, a string-keyed Map as an object or as its list of
// pairs, a flag as a boolean) and returns the result as compact JSON in the
// form nexus sends clients, read as the command's return type.
//
// A unit result, or an absent optional, is `null`; that the CLI prints
// nothing for it without --keep-null is the CLI's part.
//
// A failure is an *ArgError (an argument that does not read as its type;
// its message is morloc's "failed to parse argument #i: ...") or an
// *Error: its message is morloc's bare message ("PURE: boom int" for a
// @throw), its Kind says whether @catch could have intercepted it. Run
// does not panic: an evaluator bug comes back as an Internal error.
func (p *Program) Run(ctx context.Context, args []json.RawMessage) (out json.RawMessage, err error) {
	return p.RunWith(ctx, args, RunOptions{})
}

// eval evaluates the program to a Value.
func (p *Program) eval(ctx context.Context, args []json.RawMessage) (v Value, r *run, err error) {
	return p.evalWith(ctx, args, RunOptions{})
}

// evalWith evaluates the program to a Value; streams left open are
// discarded when it ends.
func (p *Program) evalWith(ctx context.Context, args []json.RawMessage, o RunOptions) (v Value, r *run, err error) {
	if len(args) != len(p.params) {
		return unit, nil, &ArgError{Index: min(len(args), len(p.params)), Msg: fmt.Sprintf("expected %d arguments, got %d", len(p.params), len(args))}
	}
	env := make([]Value, len(args), len(args)+16)
	d := &decoder{objectMaps: true}
	for i, raw := range args {
		n, jerr := parseJSON(raw)
		if jerr != nil {
			return unit, nil, &ArgError{Index: i, Msg: jerr.Error()}
		}
		v, derr := d.value(&n, p.params[i])
		if derr != nil {
			return unit, nil, &ArgError{Index: i, Msg: derr.Error()}
		}
		env[i] = v
	}
	if p.top == topConst {
		env = env[:0] // morloc ignores the arguments of a tree that is not a lambda
	}
	r = &run{
		ctx:   ctx,
		env:   env,
		steps: p.opts.Limits.Steps,
		bytes: p.opts.Limits.Bytes,
		depth: p.opts.Limits.Depth,
		dir:   p.opts.Dir,
	}
	r.streams.opener = o.Streams
	defer r.streams.finish()
	defer func() {
		if rec := recover(); rec != nil {
			v, r, err = unit, nil, &Error{Kind: Internal, Msg: fmt.Sprintf("internal evaluator error: %v", rec), err: &panicError{stack: debug.Stack()}}
		}
	}()
	if err := r.canceled(); err != nil {
		return unit, nil, err
	}
	switch p.top {
	case topLambda:
		v, err = r.eval(p.root.body)
	default:
		v, err = r.eval(p.root)
	}
	if err != nil {
		return unit, nil, err
	}
	return v, r, nil
}

// panicError marks an error recovered from a panic: a bug in the
// evaluator, which the fuzz test looks for.
type panicError struct{ stack []byte }

func (e *panicError) Error() string { return "panic: " + string(e.stack) }

// run is the state of one evaluation.
type run struct {
	ctx   context.Context
	env   []Value // bound variables, innermost last
	steps int64   // remaining
	bytes int64   // remaining
	depth int     // remaining
	dir   string
	tick  int
	// streams are the output streams the run opened (streams.go).
	streams streamState
}

func (r *run) canceled() *Error {
	select {
	case <-r.ctx.Done():
		return &Error{Kind: Limit, Msg: "evaluation cancelled: " + r.ctx.Err().Error(), err: r.ctx.Err()}
	default:
		return nil
	}
}

// step charges n units of work.
func (r *run) step(n int64) *Error {
	r.steps -= n
	if r.steps < 0 {
		return &Error{Kind: Limit, Msg: "evaluation exceeded its step limit (the expression does too much work)"}
	}
	r.tick += int(n)
	if r.tick >= 1024 {
		r.tick = 0
		return r.canceled()
	}
	return nil
}

// alloc charges n bytes of new values.
func (r *run) alloc(n int64) *Error {
	r.bytes -= n
	if r.bytes < 0 {
		return &Error{Kind: Limit, Msg: "evaluation exceeded its memory limit (the values it makes are too large)"}
	}
	return nil
}

// asError gives an error from the printer as an *Error.
func asError(err error) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	return internal("%s", err.Error())
}

func at(n *node, e *Error) *Error {
	if e != nil && e.Path == "" {
		e.Path = n.path
	}
	return e
}

func (r *run) eval(n *node) (Value, error) {
	if err := r.step(1); err != nil {
		return unit, err
	}
	r.depth--
	defer func() { r.depth++ }()
	if r.depth < 0 {
		return unit, &Error{Kind: Limit, Msg: "evaluation nested too deeply", Path: n.path}
	}
	switch n.op {
	case opLit:
		return n.val, nil
	case opBound:
		if n.slot < 0 || n.slot >= len(r.env) {
			return unit, at(n, internal("Unbound variable %s", n.name))
		}
		return r.env[n.slot], nil
	case opContainer:
		if err := r.alloc(24 + valueBytes*int64(len(n.args))); err != nil {
			return unit, err
		}
		if n.typ.resolve().kind == kOpt {
			if len(n.args) == 0 {
				return unit, nil
			}
			return r.eval(n.args[0])
		}
		items := make([]Value, len(n.args))
		for i, a := range n.args {
			v, err := r.eval(a)
			if err != nil {
				return unit, err
			}
			items[i] = v
		}
		return seqValue(items), nil
	case opApp:
		vals, err := r.evalArgs(n.args)
		if err != nil {
			return unit, err
		}
		r.env = append(r.env, vals...)
		v, err := r.eval(n.fn.body)
		r.env = r.env[:len(r.env)-len(vals)]
		return v, err
	case opInterp:
		vals, err := r.evalArgs(n.args)
		if err != nil {
			return unit, err
		}
		strs := n.fn.strs
		size := 0
		for _, s := range strs {
			size += len(s)
		}
		for i, v := range vals {
			if v.k != vStr {
				return unit, at(n.args[i], internal("type mismatch: interpolation argument %d is %s, not a string", i, v.describeKind()))
			}
			size += len(v.s)
		}
		if err := r.alloc(int64(size) + 16); err != nil {
			return unit, err
		}
		buf := make([]byte, 0, size)
		for i, s := range strs {
			buf = append(buf, s...)
			if i < len(vals) {
				buf = append(buf, vals[i].s...)
			}
		}
		return strValue(string(buf)), nil
	case opPattern:
		vals, err := r.evalArgs(n.args)
		if err != nil {
			return unit, err
		}
		v, perr := r.applyPattern(n, vals)
		if perr != nil {
			return unit, at(n, perr)
		}
		return v, nil
	case opMap:
		return r.evalMap(n)
	case opIf:
		c, err := r.evalAs(n.cond, vBool, "an if condition is %s, not a boolean")
		if err != nil {
			return unit, err
		}
		if c.b {
			return r.eval(n.then)
		}
		return r.eval(n.els)
	case opThrow:
		m, err := r.evalAs(n.child, vStr, "a @throw message is %s, not a string")
		if err != nil {
			return unit, err
		}
		return unit, &Error{Kind: Thrown, Msg: m.s, Path: n.path}
	case opCatch:
		v, err := r.eval(n.child)
		if err == nil {
			return v, nil
		}
		if e, ok := err.(*Error); ok && e.Catchable() {
			return r.eval(n.fallback)
		}
		return unit, err
	case opShow:
		v, err := r.eval(n.child)
		if err != nil {
			return unit, err
		}
		b, perr := r.toJSON(v, n.child.typ, morlocForm)
		if perr != nil {
			return unit, at(n, asError(perr))
		}
		return strValue(string(b)), nil
	case opRead:
		return r.evalRead(n)
	case opHash:
		v, err := r.eval(n.child)
		if err != nil {
			return unit, err
		}
		h, herr := r.hash(v, n.child.typ)
		if herr != nil {
			return unit, at(n, herr)
		}
		return strValue(fmt.Sprintf("%016x", h)), nil
	case opSave:
		return r.evalSave(n)
	case opLoad:
		return r.evalLoad(n)
	case opCloseStr:
		v, err := r.eval(n.child)
		if err != nil {
			return unit, err
		}
		return unit, &Error{Kind: Thrown, Path: n.path, Msg: fmt.Sprintf("@close: '%s' is not a registered temp file; @close only removes files created by the whole-list with:/render: gather", v.s)}
	case opOpenStream, opStdStream:
		return r.evalOpenStream(n)
	case opWrite:
		return r.evalWrite(n)
	case opFlush:
		return r.evalFlush(n)
	case opCloseHandle:
		return r.evalCloseHandle(n)
	case opRefused:
		return unit, &Error{Kind: Unsupported, Path: n.path, Msg: fmt.Sprintf("%s is not supported by nexus: it needs morloc's binary stream and packet formats", n.name)}
	case opLambda, opPatternFn, opInterpFn:
		return unit, at(n, internal("a function value cannot be evaluated on its own"))
	}
	return unit, at(n, internal("unknown operation %d", n.op))
}

// evalArgs evaluates an app's arguments eagerly, left to right.
func (r *run) evalArgs(args []*node) ([]Value, error) {
	vals := make([]Value, len(args))
	for i, a := range args {
		v, err := r.eval(a)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// evalAs evaluates n, whose value must be of kind k: else a type
// mismatch, what saying what the value is (its %s the kind it has).
func (r *run) evalAs(n *node, k vkind, what string) (Value, error) {
	v, err := r.eval(n)
	if err != nil {
		return unit, err
	}
	if v.k != k {
		return unit, at(n, internal("type mismatch: "+what, v.describeKind()))
	}
	return v, nil
}

func (r *run) evalMap(n *node) (Value, error) {
	list, err := r.evalAs(n.child, vSeq, "a map's list is %s")
	if err != nil {
		return unit, err
	}
	if err := r.alloc(24 + valueBytes*int64(len(list.seq))); err != nil {
		return unit, err
	}
	out := make([]Value, len(list.seq))
	body := n.fn.body
	for i, x := range list.seq {
		r.env = append(r.env, x)
		v, err := r.eval(body)
		r.env = r.env[:len(r.env)-1]
		if err != nil {
			return unit, err
		}
		out[i] = v
	}
	return seqValue(out), nil
}

func (r *run) evalRead(n *node) (Value, error) {
	s, err := r.evalAs(n.child, vStr, "@read takes a string, not %s")
	if err != nil {
		return unit, err
	}
	if len(s.s) == 0 {
		return unit, at(n, thrown("@read: empty input string"))
	}
	if err := r.step(int64(len(s.s)) / 64); err != nil {
		return unit, err
	}
	if err := r.alloc(4 * int64(len(s.s))); err != nil {
		return unit, err
	}
	j, jerr := parseJSON([]byte(s.s))
	if jerr != nil {
		return unit, at(n, thrown("%s", jerr.Error()))
	}
	v, derr := (&decoder{}).value(&j, n.typ)
	if derr != nil {
		return unit, at(n, thrown("%s", derr.Error()))
	}
	return v, nil
}
