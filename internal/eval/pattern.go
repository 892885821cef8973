package eval

// applyPattern applies an app's pattern to its evaluated arguments
// (docs/spec.md §7.3.7): a getter, a getter with bracket bounds, a setter, a
// standalone index or a standalone slice.
func (r *run) applyPattern(n *node, vals []Value) (Value, *Error) {
	pat := n.fn.pat
	last := len(vals) - 1
	if pat.kind == patSlice {
		return r.slice(vals[0], vals[1], vals[2], vals[3], n.args[3].typ)
	}
	if pat.arity > 0 || len(vals) == 1 {
		g := &getter{r: r, bounds: vals[:pat.arity], terms: make([]Value, 0, pat.terms)}
		if err := g.walk(pat, n.args[last].typ, vals[last]); err != nil {
			return unit, err
		}
		if pat.terms == 1 {
			return g.terms[0], nil
		}
		return seqValue(g.terms), nil
	}
	k := 0
	return r.set(pat, n.args[0].typ, vals[0], vals[1:], &k)
}

type getter struct {
	r      *run
	bounds []Value
	next   int
	terms  []Value
}

func (g *getter) bound() Value {
	v := g.bounds[g.next]
	g.next++
	return v
}

func (g *getter) walk(p *pattern, t *Type, v Value) *Error {
	if err := g.r.step(1); err != nil {
		return err
	}
	switch p.kind {
	case patEnd:
		g.terms = append(g.terms, v)
		return nil
	case patIdx, patKey:
		rt, err := fields(p, t, v)
		if err != nil {
			return err
		}
		for _, s := range p.sels {
			i, err := fieldIndex(p, rt, s)
			if err != nil {
				return err
			}
			if err := g.walk(s.sub, rt.items[i], v.seq[i]); err != nil {
				return err
			}
		}
		return nil
	case patIndex:
		rt := t.resolve()
		if rt.kind != kList || v.k != vSeq {
			return internal("type mismatch: a bracket index applies to a list, not %s", t.describe())
		}
		i, err := indexOf(g.bound(), len(v.seq))
		if err != nil {
			return err
		}
		if p.sub == nil {
			g.terms = append(g.terms, v.seq[i])
			return nil
		}
		return g.walk(p.sub, rt.elem, v.seq[i])
	case patSlice:
		start, stop, step := g.bound(), g.bound(), g.bound()
		out, err := g.r.slice(start, stop, step, v, t)
		if err != nil {
			return err
		}
		g.terms = append(g.terms, out)
		return nil
	}
	return internal("unknown pattern")
}

// fields checks that a struct pattern's receiver is a tuple or record and
// gives its type.
func fields(p *pattern, t *Type, v Value) (*Type, *Error) {
	rt := t.resolve()
	if rt.kind != kTuple && rt.kind != kRecord {
		if p.kind == patKey {
			return nil, internal("Pattern contains key missing in schema: %s (the receiver is %s, not a record)", p.sels[0].key, t.describe())
		}
		return nil, internal("type mismatch: a field pattern applies to a tuple or a record, not %s", t.describe())
	}
	if v.k != vSeq || len(v.seq) != len(rt.items) {
		return nil, mismatch(rt, v)
	}
	return rt, nil
}

func fieldIndex(p *pattern, rt *Type, s selector) (int, *Error) {
	if p.kind == patIdx {
		if s.index >= len(rt.items) {
			return 0, internal("Pattern child index %d out of range for schema size %d", s.index, len(rt.items))
		}
		return s.index, nil
	}
	if rt.kind == kRecord {
		for i, k := range rt.keys {
			if k == s.key {
				return i, nil
			}
		}
	}
	return 0, internal("Pattern contains key missing in schema: %s", s.key)
}

// boundInt reads a bracket bound: any integer type, or an optional one
// (null reads as absent).
func boundInt(v Value) (n int64, present bool, err *Error) {
	switch v.k {
	case vNull:
		return 0, false, nil
	case vInt:
		if v.i != nil {
			return 0, false, internal("Bracket bound: BigInt with more than 1 limb does not fit in i64")
		}
		return v.n, true, nil
	}
	return 0, false, internal("Bracket bound has non-integer type %s", v.describeKind())
}

// indexOf gives the position a bracket index selects in a list of n.
func indexOf(b Value, n int) (int, *Error) {
	raw, ok, err := boundInt(b)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, internal("Bracket index cannot be Null")
	}
	i := raw
	if i < 0 {
		i += int64(n)
	}
	if i < 0 || i >= int64(n) {
		return 0, internal("Bracket index %d out of bounds for array of size %d", raw, n)
	}
	return int(i), nil
}

// slice is list[start:stop:step] with Python's rules.
func (r *run) slice(startV, stopV, stepV, list Value, t *Type) (Value, *Error) {
	if rt := t.resolve(); rt.kind != kList || list.k != vSeq {
		return unit, internal("type mismatch: a bracket slice applies to a list, not %s", t.describe())
	}
	n := int64(len(list.seq))
	start, hasStart, err := boundInt(startV)
	if err != nil {
		return unit, err
	}
	stop, hasStop, err := boundInt(stopV)
	if err != nil {
		return unit, err
	}
	step, hasStep, err := boundInt(stepV)
	if err != nil {
		return unit, err
	}
	if !hasStep {
		step = 1
	}
	if step == 0 {
		return unit, internal("Bracket slice step cannot be 0")
	}
	norm := func(v int64) int64 {
		if v < 0 {
			v += n // v >= math.MinInt64, n >= 0: no overflow
		}
		if step > 0 {
			return max(0, min(v, n))
		}
		return max(-1, min(v, n-1))
	}
	switch {
	case hasStart:
		start = norm(start)
	case step > 0:
		start = 0
	default:
		start = n - 1
	}
	switch {
	case hasStop:
		stop = norm(stop)
	case step > 0:
		stop = n
	default:
		stop = -1
	}
	// Count the selected positions without stepping past them: a huge
	// step must not overflow.
	var count int64
	if step > 0 && start < stop {
		count = (stop-start-1)/step + 1
	} else if step < 0 && start > stop {
		count = (start-stop-1)/(-step) + 1 // step > math.MinInt64 + ... : -step may overflow only for MinInt64
		if step == -step {
			count = 1
		}
	}
	if err := r.step(count); err != nil {
		return unit, err
	}
	if err := r.alloc(24 + valueBytes*count); err != nil {
		return unit, err
	}
	out := make([]Value, count)
	for k := int64(0); k < count; k++ {
		out[k] = list.seq[start+k*step]
	}
	return seqValue(out), nil
}

// set copies v and overwrites the selected fields with the next values,
// depth first.
func (r *run) set(p *pattern, t *Type, v Value, vals []Value, k *int) (Value, *Error) {
	if err := r.step(1); err != nil {
		return unit, err
	}
	switch p.kind {
	case patEnd:
		if *k >= len(vals) {
			return unit, internal("setter has too few values")
		}
		out := vals[*k]
		*k++
		return out, nil
	case patIdx, patKey:
		rt, err := fields(p, t, v)
		if err != nil {
			return unit, err
		}
		if err := r.alloc(24 + valueBytes*int64(len(v.seq))); err != nil {
			return unit, err
		}
		cp := append([]Value(nil), v.seq...)
		for _, s := range p.sels {
			i, err := fieldIndex(p, rt, s)
			if err != nil {
				return unit, err
			}
			if cp[i], err = r.set(s.sub, rt.items[i], cp[i], vals, k); err != nil {
				return unit, err
			}
		}
		return seqValue(cp), nil
	}
	return unit, internal("Bracket pattern reached a setter")
}
