package eval

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// op is the operation of a compiled node.
type op uint8

const (
	opLit op = iota // lit, str: a constant
	opContainer
	opBound
	opLambda
	opApp     // app with a lambda: let / do
	opPattern // app with a pattern
	opInterp  // app with an interpolation
	opMap
	opIf
	opThrow
	opCatch
	opShow
	opRead
	opHash
	opSave
	opLoad
	opCloseStr // close of a Str: morloc's temp-file unlink, which always fails here
	opRefused  // a handle/stream intrinsic nexus does not have
	// Output streams (streams.go): their node's name is the stream's
	// value schema, its format "append" for @append, the stream for
	// @stdout/@stderr.
	opOpenStream  // open_ostream, append: child is the path
	opStdStream   // stdout, stderr
	opWrite       // level, value, and dest the handle
	opFlush       // child is the handle
	opCloseHandle // close of a handle: child is the handle
	opPatternFn   // a pattern node itself (only as an app's func)
	opInterpFn    // an interpolation node itself (only as an app's func)
)

// node is one compiled expression.
type node struct {
	op   op
	typ  *Type  // the schema of the value it gives (nil for a lambda)
	path string // its JSON path, for messages

	val Value // opLit

	slot int    // opBound: index in the environment, -1 when unbound
	name string // opBound: the variable; opRefused: the intrinsic

	vars []string // opLambda
	body *node    // opLambda

	fn   *node   // opApp, opPattern, opInterp, opMap: the lambda / pattern / interpolation
	args []*node // opApp, opPattern, opInterp: arguments; opContainer: elements

	pat  *pattern // opPatternFn
	strs []string // opInterpFn

	cond, then, els *node // opIf

	child    *node // opThrow msg, opShow/opRead/opHash/opLoad child, opCatch fallible, opMap list, opCloseStr handle
	fallback *node // opCatch

	format             string // opSave
	level, value, dest *node  // opSave
}

// Param is one argument of a command: the schema of the one value it
// binds. A flag is "b"; a record-unrolled group is its whole record.
type Param struct {
	Schema string
}

// Limits bound one evaluation. A zero field takes its default.
type Limits struct {
	// Steps bounds the work: one step per node evaluated and per element a
	// node walks (map, slice, hash, ...), a few tens of nanoseconds each.
	// Default 100,000,000: seconds of work, not minutes.
	Steps int64
	// Bytes bounds the memory the values made by the evaluation take
	// (strings, lists, records, loaded files). Default 512 MiB. The
	// arguments a call brings are not counted.
	Bytes int64
	// Depth bounds the nesting of evaluation. Default 5,000.
	Depth int
}

const (
	defaultSteps = 100_000_000
	defaultBytes = 512 << 20
	defaultDepth = 5000
)

// Options adjust Compile.
type Options struct {
	Limits Limits
	// Dir is the directory against which @save and @load resolve relative
	// paths; empty means the process's working directory, as in morloc.
	Dir string
}

// Program is a compiled pure command: safe to run any number of times,
// from any number of goroutines at once.
type Program struct {
	root    *node
	params  []*Type
	ret     *Type
	top     topKind
	opts    Options
	uses    []string // intrinsics used, sorted
	refused []string // of those, the ones nexus does not have, in tree order
}

type topKind uint8

const (
	topConst   topKind = iota // no arguments bound
	topLambda                 // arguments bound to the lambda's variables
	topPattern                // a pattern applied to the arguments
)

// Compile parses and checks a pure command's expression tree once, at
// manifest load: expr is the command's `expr`, params its arguments in
// manifest order (one value each), ret its return schema. A malformed
// tree gives a *CompileError naming the JSON path of the fault
// ("expr.body.args[1]: unknown tag \"foo\""). A tree that uses a handle
// or stream intrinsic compiles; Refusal says so.
func Compile(expr json.RawMessage, params []Param, ret string, opts *Options) (*Program, error) {
	p := &Program{}
	if opts != nil {
		p.opts = *opts
	}
	if p.opts.Limits.Steps <= 0 {
		p.opts.Limits.Steps = defaultSteps
	}
	if p.opts.Limits.Bytes <= 0 {
		p.opts.Limits.Bytes = defaultBytes
	}
	if p.opts.Limits.Depth <= 0 {
		p.opts.Limits.Depth = defaultDepth
	}
	c := &compiler{schemas: schemaCache{}, prog: p, seen: map[string]bool{}}
	var err error
	if p.ret, err = c.schemas.get(ret); err != nil {
		return nil, &CompileError{Path: "return.schema", Msg: err.Error()}
	}
	for i, a := range params {
		t, err := c.schemas.get(a.Schema)
		if err != nil {
			return nil, &CompileError{Path: fmt.Sprintf("args[%d].schema", i), Msg: err.Error()}
		}
		p.params = append(p.params, t)
	}
	if len(expr) == 0 {
		return nil, &CompileError{Path: "expr", Msg: "the pure command has no expression"}
	}
	tree, err := parseJSON(expr)
	if err != nil {
		return nil, &CompileError{Path: "expr", Msg: err.Error()}
	}
	tag, _ := c.tag(&tree, "expr")
	switch tag {
	case "lambda":
		p.top = topLambda
		root, err := c.lambda(&tree, "expr", nil)
		if err != nil {
			return nil, err
		}
		if len(root.vars) != len(p.params) {
			return nil, &CompileError{Path: "expr.vars", Msg: fmt.Sprintf("the lambda takes %d variables but the command has %d arguments", len(root.vars), len(p.params))}
		}
		p.root = root
	case "pattern":
		p.top = topPattern
		fn, err := c.expr(&tree, "expr", nil, ctxFunc)
		if err != nil {
			return nil, err
		}
		args := make([]*node, len(p.params))
		for i, t := range p.params {
			args[i] = &node{op: opBound, typ: t, slot: i, path: fmt.Sprintf("args[%d]", i)}
		}
		app := &node{op: opPattern, typ: p.ret, path: "expr", fn: fn, args: args}
		if err := c.checkPatternApp(app); err != nil {
			return nil, err
		}
		p.root = app
	default:
		p.top = topConst
		root, err := c.expr(&tree, "expr", nil, ctxValue)
		if err != nil {
			return nil, err
		}
		p.root = root
	}
	return p, nil
}

// CompileCommand compiles a pure manifest command: its expr, one Param per
// argument (a flag binds a Bool, a record group its whole record) and its
// return schema.
func CompileCommand(cmd *manifest.Command, opts *Options) (*Program, error) {
	params := make([]Param, len(cmd.Args))
	for i, a := range cmd.Args {
		s := a.Schema
		if a.Kind == manifest.KindFlag && s == "" {
			s = "b"
		}
		params[i] = Param{Schema: s}
	}
	return Compile(cmd.Expr, params, cmd.Return.Schema, opts)
}

// Intrinsics lists the intrinsics the tree uses (such as "@show",
// "@load", "@open"), each once, sorted.
func (p *Program) Intrinsics() []string { return append([]string(nil), p.uses...) }

// Refusal says why nexus cannot run the command, or "" when it can: the
// first intrinsic the tree uses that needs morloc's binary formats (the
// handle and stream intrinsics of docs/spec.md §7.3.15, @save in the voidstar
// format). A caller leaves such a command off the tool surface with this
// reason; running it fails with an Unsupported error when the evaluation
// reaches that intrinsic.
func (p *Program) Refusal() string {
	if len(p.refused) == 0 {
		return ""
	}
	return fmt.Sprintf("uses %s, which needs morloc's binary data formats (nexus reads and writes JSON and msgpack only)", p.refused[0])
}

// Params gives the number of arguments the program binds.
func (p *Program) Params() int { return len(p.params) }

type compiler struct {
	schemas schemaCache
	prog    *Program
	seen    map[string]bool
}

// position says where an expression sits, which decides whether a
// lambda, pattern or interpolation may be there.
type position uint8

const (
	ctxValue position = iota
	ctxFunc           // the func of an app: lambda, pattern or interpolation
)

func cerr(path, format string, a ...any) *CompileError {
	return &CompileError{Path: path, Msg: fmt.Sprintf(format, a...)}
}

func (c *compiler) use(name string, refused bool) {
	if c.seen[name] {
		return
	}
	c.seen[name] = true
	c.prog.uses = append(c.prog.uses, name)
	sort.Strings(c.prog.uses)
	if refused {
		c.prog.refused = append(c.prog.refused, name)
	}
}

func (c *compiler) tag(n *jnode, path string) (string, *CompileError) {
	if n.k != jObj {
		return "", cerr(path, "expected an expression object, got %s", jshow(n))
	}
	t, ok := n.get("tag")
	if !ok {
		return "", cerr(path, "expression has no \"tag\"")
	}
	if t.k != jStr {
		return "", cerr(path+".tag", "expected a string, got %s", jshow(t))
	}
	return t.s, nil
}

func (c *compiler) field(n *jnode, path, key string) (*jnode, *CompileError) {
	f, ok := n.get(key)
	if !ok {
		return nil, cerr(path, "missing field %q", key)
	}
	return f, nil
}

func (c *compiler) strField(n *jnode, path, key string) (string, *CompileError) {
	f, err := c.field(n, path, key)
	if err != nil {
		return "", err
	}
	if f.k != jStr {
		return "", cerr(path+"."+key, "expected a string, got %s", jshow(f))
	}
	return f.s, nil
}

func (c *compiler) schema(n *jnode, path string) (*Type, *CompileError) {
	s, err := c.strField(n, path, "schema")
	if err != nil {
		return nil, err
	}
	t, perr := c.schemas.get(s)
	if perr != nil {
		return nil, cerr(path+".schema", "%s", perr.Error())
	}
	return t, nil
}

func (c *compiler) sub(n *jnode, path, key string, scope []string) (*node, *CompileError) {
	f, err := c.field(n, path, key)
	if err != nil {
		return nil, err
	}
	return c.expr(f, path+"."+key, scope, ctxValue)
}

// refusedIntrinsics are the handle and stream intrinsics (docs/spec.md §7.3.15)
// that read morloc's binary formats (input files and streams, @concat), by
// tag, with the name a message gives them. The output streams are not among
// them (streams.go).
var refusedIntrinsics = map[string]string{
	"open":         "@open",
	"fschema":      "@fschema",
	"flen":         "@flen",
	"next":         "@next",
	"stream":       "@stream",
	"streamlayout": "@streamLayout",
	"ifile_walk":   "@walk",
	"concat":       "@concat",
	"stdin":        "@stdin",
}

func (c *compiler) expr(n *jnode, path string, scope []string, pos position) (*node, *CompileError) {
	tag, err := c.tag(n, path)
	if err != nil {
		return nil, err
	}
	switch tag {
	case "lambda", "pattern", "interpolation":
		if pos != ctxFunc {
			return nil, cerr(path, "a %s is valid only at the top of a command's expr or as the func of an app or a map", tag)
		}
	}
	switch tag {
	case "lit":
		return c.lit(n, path)
	case "str":
		t, err := c.schema(n, path)
		if err != nil {
			return nil, err
		}
		if t.resolve().kind != kStr {
			return nil, cerr(path+".schema", "a str literal has schema %q, not a string", t.describe())
		}
		s, err := c.strField(n, path, "value")
		if err != nil {
			return nil, err
		}
		return &node{op: opLit, typ: t, path: path, val: strValue(s)}, nil
	case "container":
		return c.container(n, path, scope)
	case "bound":
		t, err := c.schema(n, path)
		if err != nil {
			return nil, err
		}
		name, err := c.strField(n, path, "var")
		if err != nil {
			return nil, err
		}
		slot := -1
		for i := len(scope) - 1; i >= 0; i-- {
			if scope[i] == name {
				slot = i
				break
			}
		}
		return &node{op: opBound, typ: t, path: path, name: name, slot: slot}, nil
	case "lambda":
		return c.lambda(n, path, scope)
	case "app":
		return c.app(n, path, scope)
	case "pattern":
		t, err := c.schema(n, path)
		if err != nil {
			return nil, err
		}
		pf, err := c.field(n, path, "pattern")
		if err != nil {
			return nil, err
		}
		pat, perr := c.pattern(pf, path+".pattern", true)
		if perr != nil {
			return nil, perr
		}
		return &node{op: opPatternFn, typ: t, path: path, pat: pat}, nil
	case "interpolation":
		t, err := c.schema(n, path)
		if err != nil {
			return nil, err
		}
		sf, err := c.field(n, path, "strings")
		if err != nil {
			return nil, err
		}
		if sf.k != jArr || len(sf.items) == 0 {
			return nil, cerr(path+".strings", "expected a non-empty array of strings")
		}
		strs := make([]string, len(sf.items))
		for i := range sf.items {
			if sf.items[i].k != jStr {
				return nil, cerr(fmt.Sprintf("%s.strings[%d]", path, i), "expected a string, got %s", jshow(&sf.items[i]))
			}
			strs[i] = sf.items[i].s
		}
		return &node{op: opInterpFn, typ: t, path: path, strs: strs}, nil
	case "map":
		t, err := c.schema(n, path)
		if err != nil {
			return nil, err
		}
		if t.resolve().kind != kList {
			return nil, cerr(path+".schema", "a map gives a list, not %s", t.describe())
		}
		ff, err := c.field(n, path, "func")
		if err != nil {
			return nil, err
		}
		if ftag, terr := c.tag(ff, path+".func"); terr != nil {
			return nil, terr
		} else if ftag != "lambda" {
			return nil, cerr(path+".func", "Map func must be a lambda")
		}
		fn, err := c.lambda(ff, path+".func", scope)
		if err != nil {
			return nil, err
		}
		if len(fn.vars) != 1 {
			return nil, cerr(path+".func", "Map lambda must take exactly one argument")
		}
		list, err := c.sub(n, path, "list", scope)
		if err != nil {
			return nil, err
		}
		return &node{op: opMap, typ: t, path: path, fn: fn, child: list}, nil
	case "if":
		t, err := c.schema(n, path)
		if err != nil {
			return nil, err
		}
		nd := &node{op: opIf, typ: t, path: path}
		if nd.cond, err = c.sub(n, path, "cond", scope); err != nil {
			return nil, err
		}
		if nd.then, err = c.sub(n, path, "then", scope); err != nil {
			return nil, err
		}
		if nd.els, err = c.sub(n, path, "else", scope); err != nil {
			return nil, err
		}
		return nd, nil
	case "throw":
		c.use("@throw", false)
		msg, err := c.sub(n, path, "msg", scope)
		if err != nil {
			return nil, err
		}
		return &node{op: opThrow, typ: &Type{kind: kAny}, path: path, child: msg}, nil
	case "catch":
		c.use("@catch", false)
		nd := &node{op: opCatch, path: path}
		var err *CompileError
		if nd.child, err = c.sub(n, path, "fallible", scope); err != nil {
			return nil, err
		}
		if nd.fallback, err = c.sub(n, path, "fallback", scope); err != nil {
			return nil, err
		}
		nd.typ = nd.fallback.typ
		return nd, nil
	case "show", "read", "hash", "load":
		t, err := c.schema(n, path)
		if err != nil {
			return nil, err
		}
		c.use("@"+tag, false)
		child, err := c.sub(n, path, "child", scope)
		if err != nil {
			return nil, err
		}
		ops := map[string]op{"show": opShow, "read": opRead, "hash": opHash, "load": opLoad}
		return &node{op: ops[tag], typ: t, path: path, child: child}, nil
	case "save":
		return c.save(n, path, scope)
	case "close":
		// @close of a Str unlinks a temp file registered by @tmpfile,
		// which never happens in a pure command: it always fails.
		if h, ok := n.get("handle"); ok {
			if hs, ok := h.get("schema"); ok && hs.k == jStr {
				if ht, err := c.schemas.get(hs.s); err == nil && ht.resolve().kind == kStr {
					c.use("@close", false)
					child, err := c.expr(h, path+".handle", scope, ctxValue)
					if err != nil {
						return nil, err
					}
					return &node{op: opCloseStr, typ: &Type{kind: kNil}, path: path, child: child}, nil
				}
			}
		}
	}
	switch tag {
	case "open_ostream", "append", "stdout", "stderr", "write", "flush", "close":
		return c.stream(n, tag, path, scope)
	}
	if name, ok := refusedIntrinsics[tag]; ok {
		c.use(name, true)
		return &node{op: opRefused, typ: &Type{kind: kAny}, path: path, name: name}, nil
	}
	return nil, cerr(path, "unknown tag %q", tag)
}

func (c *compiler) lit(n *jnode, path string) (*node, *CompileError) {
	t, err := c.schema(n, path)
	if err != nil {
		return nil, err
	}
	lt, err := c.strField(n, path, "lit_type")
	if err != nil {
		return nil, err
	}
	text, err := c.strField(n, path, "value")
	if err != nil {
		return nil, err
	}
	r := t.resolve()
	bad := func() *CompileError {
		return cerr(path+".value", "invalid %s literal %s", lt, strconv.Quote(truncate(text)))
	}
	nd := &node{op: opLit, typ: t, path: path}
	switch lt {
	case "j", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8":
		if r.kind != kInt || r.code != lt {
			return nil, cerr(path+".schema", "schema %s does not match lit_type %s", r.describe(), lt)
		}
		i, msg := parseDecimal(text)
		if msg != "" {
			return nil, cerr(path+".value", "%s", msg)
		}
		if !fitsInt(r, i) {
			lo, hi := intRange(r)
			return nil, cerr(path+".value", "%s does not fit %s (range %s to %s)", truncate(text), lt, lo, hi)
		}
		nd.val = intValue(i)
	case "f4", "f8":
		if r.kind != kFloat || r.code != lt {
			return nil, cerr(path+".schema", "schema %s does not match lit_type %s", r.describe(), lt)
		}
		bits := 64
		if lt == "f4" {
			bits = 32
		}
		f, perr := strconv.ParseFloat(text, bits)
		if perr != nil && !isRangeErr(perr) {
			return nil, bad()
		}
		nd.val = floatValue(f)
	case "b":
		if r.kind != kBool {
			return nil, cerr(path+".schema", "schema %s does not match lit_type b", r.describe())
		}
		nd.val = boolValue(text != "0")
	case "z":
		if r.kind != kNil {
			return nil, cerr(path+".schema", "schema %s does not match lit_type z", r.describe())
		}
		nd.val = unit
	default:
		return nil, cerr(path+".lit_type", "Unknown lit_type: %s", lt)
	}
	return nd, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func (c *compiler) container(n *jnode, path string, scope []string) (*node, *CompileError) {
	t, err := c.schema(n, path)
	if err != nil {
		return nil, err
	}
	ef, err := c.field(n, path, "elements")
	if err != nil {
		return nil, err
	}
	if ef.k != jArr {
		return nil, cerr(path+".elements", "expected an array, got %s", jshow(ef))
	}
	r := t.resolve()
	want := -1
	switch r.kind {
	case kList:
	case kTuple, kRecord:
		want = len(r.items)
	case kOpt:
		if len(ef.items) > 1 {
			return nil, cerr(path+".elements", "an optional container holds 0 or 1 elements, not %d", len(ef.items))
		}
	default:
		return nil, cerr(path+".schema", "Container schema is not a container type")
	}
	if want >= 0 && len(ef.items) != want {
		return nil, cerr(path+".elements", "the %s schema has %d fields but the container has %d elements", r.kind, want, len(ef.items))
	}
	nd := &node{op: opContainer, typ: t, path: path, args: make([]*node, len(ef.items))}
	for i := range ef.items {
		if nd.args[i], err = c.expr(&ef.items[i], fmt.Sprintf("%s.elements[%d]", path, i), scope, ctxValue); err != nil {
			return nil, err
		}
	}
	return nd, nil
}

func (c *compiler) lambda(n *jnode, path string, scope []string) (*node, *CompileError) {
	vf, err := c.field(n, path, "vars")
	if err != nil {
		return nil, err
	}
	if vf.k != jArr {
		return nil, cerr(path+".vars", "expected an array of names, got %s", jshow(vf))
	}
	vars := make([]string, len(vf.items))
	for i := range vf.items {
		if vf.items[i].k != jStr {
			return nil, cerr(fmt.Sprintf("%s.vars[%d]", path, i), "expected a string, got %s", jshow(&vf.items[i]))
		}
		vars[i] = vf.items[i].s
	}
	inner := append(append(make([]string, 0, len(scope)+len(vars)), scope...), vars...)
	body, err := c.sub(n, path, "body", inner)
	if err != nil {
		return nil, err
	}
	return &node{op: opLambda, path: path, vars: vars, body: body}, nil
}

func (c *compiler) app(n *jnode, path string, scope []string) (*node, *CompileError) {
	t, err := c.schema(n, path)
	if err != nil {
		return nil, err
	}
	af, err := c.field(n, path, "args")
	if err != nil {
		return nil, err
	}
	if af.k != jArr {
		return nil, cerr(path+".args", "expected an array, got %s", jshow(af))
	}
	args := make([]*node, len(af.items))
	for i := range af.items {
		if args[i], err = c.expr(&af.items[i], fmt.Sprintf("%s.args[%d]", path, i), scope, ctxValue); err != nil {
			return nil, err
		}
	}
	ff, err := c.field(n, path, "func")
	if err != nil {
		return nil, err
	}
	ftag, terr := c.tag(ff, path+".func")
	if terr != nil {
		return nil, terr
	}
	switch ftag {
	case "lambda", "pattern", "interpolation":
	default:
		return nil, cerr(path+".func", "Invalid function in app expression: %s (expected a lambda, a pattern or an interpolation)", strconv.Quote(ftag))
	}
	fn, err := c.expr(ff, path+".func", scope, ctxFunc)
	if err != nil {
		return nil, err
	}
	nd := &node{typ: t, path: path, fn: fn, args: args}
	switch fn.op {
	case opLambda:
		nd.op = opApp
		if len(fn.vars) != len(args) {
			return nil, cerr(path, "the lambda takes %d variables but the app gives %d arguments", len(fn.vars), len(args))
		}
	case opInterpFn:
		nd.op = opInterp
		if len(fn.strs) != len(args)+1 {
			return nil, cerr(path, "the interpolation has %d strings, so it takes %d arguments, but the app gives %d", len(fn.strs), len(fn.strs)-1, len(args))
		}
	case opPatternFn:
		nd.op = opPattern
		if err := c.checkPatternApp(nd); err != nil {
			return nil, err
		}
	}
	return nd, nil
}

func (c *compiler) save(n *jnode, path string, scope []string) (*node, *CompileError) {
	format := "voidstar"
	if f, ok := n.get("format"); ok {
		if f.k != jStr {
			return nil, cerr(path+".format", "expected a string, got %s", jshow(f))
		}
		format = f.s
	}
	nd := &node{op: opSave, typ: &Type{kind: kNil}, path: path, format: format}
	switch format {
	case "json":
		c.use("@savej", false)
	case "msgpack":
		c.use("@savem", false)
	default:
		c.use("@save (morloc's voidstar format)", true)
	}
	var err *CompileError
	if nd.level, err = c.sub(n, path, "level", scope); err != nil {
		return nil, err
	}
	if nd.value, err = c.sub(n, path, "value", scope); err != nil {
		return nil, err
	}
	if nd.dest, err = c.sub(n, path, "path", scope); err != nil {
		return nil, err
	}
	return nd, nil
}

// ---- patterns ----

type patKind uint8

const (
	patEnd patKind = iota
	patIdx
	patKey
	patIndex // bracket_index
	patSlice // bracket_slice
)

type selector struct {
	index int    // patIdx
	key   string // patKey
	sub   *pattern
}

type pattern struct {
	kind  patKind
	sels  []selector
	sub   *pattern // patIndex in a chain; nil for a standalone index
	terms int      // terminals, depth-first
	arity int      // bracket arguments consumed
	path  string
}

func (c *compiler) pattern(n *jnode, path string, top bool) (*pattern, *CompileError) {
	if n.k != jObj {
		return nil, cerr(path, "expected a pattern object, got %s", jshow(n))
	}
	tf, ok := n.get("type")
	if !ok || tf.k != jStr {
		return nil, cerr(path, "Pattern missing 'type' field")
	}
	p := &pattern{path: path}
	switch tf.s {
	case "end":
		p.kind, p.terms = patEnd, 1
	case "bracket_slice":
		p.kind, p.terms, p.arity = patSlice, 1, 3
	case "bracket_index":
		p.kind, p.arity = patIndex, 1
		if sf, ok := n.get("sub"); ok {
			sub, err := c.pattern(sf, path+".sub", false)
			if err != nil {
				return nil, err
			}
			p.sub = sub
			p.terms, p.arity = sub.terms, 1+sub.arity
		} else if !top {
			return nil, cerr(path, "a bracket_index inside a selector chain needs a \"sub\"")
		} else {
			p.terms = 1
		}
	case "idx", "key":
		p.kind = patIdx
		if tf.s == "key" {
			p.kind = patKey
		}
		sf, ok := n.get("selectors")
		if !ok || sf.k != jArr || len(sf.items) == 0 {
			return nil, cerr(path+".selectors", "expected a non-empty array of selectors")
		}
		for i := range sf.items {
			sp := fmt.Sprintf("%s.selectors[%d]", path, i)
			s := &sf.items[i]
			if s.k != jObj {
				return nil, cerr(sp, "expected a selector object, got %s", jshow(s))
			}
			var sel selector
			if p.kind == patIdx {
				f, ok := s.get("index")
				if !ok || f.k != jNum {
					return nil, cerr(sp+".index", "expected a number")
				}
				idx, err := strconv.Atoi(f.s)
				if err != nil || idx < 0 {
					return nil, cerr(sp+".index", "expected a non-negative integer, got %s", truncate(f.s))
				}
				sel.index = idx
			} else {
				f, ok := s.get("key")
				if !ok || f.k != jStr {
					return nil, cerr(sp+".key", "expected a string")
				}
				sel.key = f.s
			}
			subf, ok := s.get("sub")
			if !ok {
				return nil, cerr(sp, "selector has no \"sub\" pattern")
			}
			sub, err := c.pattern(subf, sp+".sub", false)
			if err != nil {
				return nil, err
			}
			sel.sub = sub
			p.terms += sub.terms
			p.arity += sub.arity
			p.sels = append(p.sels, sel)
		}
	default:
		return nil, cerr(path+".type", "Unknown pattern type: %s", tf.s)
	}
	return p, nil
}

// checkPatternApp checks that an app of a pattern has the arguments its
// form takes (docs/spec.md §7.3.7).
func (c *compiler) checkPatternApp(app *node) *CompileError {
	pat, nargs := app.fn.pat, len(app.args)
	switch pat.kind {
	case patIndex:
		if nargs != 1+pat.arity || pat.arity == 0 {
			return cerr(app.path, "an index pattern takes %d arguments (bounds, then the list), got %d", 1+pat.arity, nargs)
		}
	case patSlice:
		if nargs != 4 {
			return cerr(app.path, "BracketSlice expects 4 args (start, stop, step, receiver), got %d", nargs)
		}
	default:
		switch {
		case nargs == 0:
			return cerr(app.path, "No arguments provided to pattern")
		case pat.arity > 0 && nargs != 1+pat.arity:
			return cerr(app.path, "the pattern has bracket steps taking %d bounds, so it takes %d arguments (the bounds, then the receiver), got %d", pat.arity, 1+pat.arity, nargs)
		case pat.arity == 0 && nargs > 1 && nargs-1 != pat.terms:
			return cerr(app.path, "a setter with %d selected fields takes the receiver and %d values, got %d arguments", pat.terms, pat.terms, nargs)
		}
	}
	return nil
}

// stream compiles the output-stream intrinsics (streams.go).
func (c *compiler) stream(n *jnode, tag, path string, scope []string) (*node, *CompileError) {
	handle := &Type{kind: kOStream}
	unitT := &Type{kind: kNil}
	var err *CompileError
	switch tag {
	case "open_ostream", "append", "stdout", "stderr":
		schema, serr := c.strField(n, path, "schema")
		if serr != nil {
			return nil, serr
		}
		t, terr := c.schemas.get(schema)
		if terr != nil {
			return nil, cerr(path+".schema", "%s", terr.Error())
		}
		if t.resolve().kind != kList {
			// morloc 0.90 wrote the element's schema here (docs/spec.md §7.7);
			// 0.98 writes the stream's, the list [T].
			schema = "a" + schema
			if _, terr := c.schemas.get(schema); terr != nil {
				return nil, cerr(path+".schema", "%s", terr.Error())
			}
		}
		nd := &node{typ: handle, path: path, name: schema}
		switch tag {
		case "stdout", "stderr":
			c.use("@"+tag, false)
			nd.op, nd.format = opStdStream, tag
			return nd, nil
		case "append":
			c.use("@append", false)
			nd.op, nd.format = opOpenStream, "append"
		default:
			c.use("@open", false)
			nd.op = opOpenStream
		}
		if nd.child, err = c.sub(n, path, "path", scope); err != nil {
			return nil, err
		}
		return nd, nil
	case "write":
		c.use("@write", false)
		nd := &node{op: opWrite, typ: unitT, path: path}
		if nd.level, err = c.sub(n, path, "level", scope); err != nil {
			return nil, err
		}
		if nd.value, err = c.sub(n, path, "value", scope); err != nil {
			return nil, err
		}
		if nd.value.typ == nil || nd.value.typ.resolve().kind != kList {
			return nil, cerr(path+".value", "@write writes a list")
		}
		if nd.dest, err = c.sub(n, path, "handle", scope); err != nil {
			return nil, err
		}
		return nd, nil
	default: // flush, close of a handle
		c.use("@"+tag, false)
		op := opFlush
		if tag == "close" {
			op = opCloseHandle
		}
		nd := &node{op: op, typ: unitT, path: path}
		if nd.child, err = c.sub(n, path, "handle", scope); err != nil {
			return nil, err
		}
		return nd, nil
	}
}
