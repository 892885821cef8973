package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// FuzzEval feeds hostile expression trees, schemas and arguments to
// Compile and Run: neither may panic or hang; a run ends in a value that
// is valid JSON or an error.
func FuzzEval(f *testing.F) {
	for _, gc := range goldenFiles(f) {
		for _, c := range gc.Commands {
			schema, arg := "", ""
			if len(c.Args) > 0 {
				schema, arg = c.Args[0].Schema, string(c.Call[0])
			}
			f.Add(string(c.Expr), c.Return, schema, arg)
		}
	}
	ten := cont("aj", jl(0), jl(1), jl(2), jl(3))
	for _, e := range []string{
		app("aj", pat("aj", slicePat), jl(-1), cont("?j"), jl(-2), ten),
		app("j", pat("j", bidx("")), jl(-1), ten),
		app("t2jj", pat("t2jj", idxP(idx(1, end), idx(0, end))), cont("t2jj", jl(1), jl(2)), jl(3), jl(4)),
		mapE("as", "e", show(bound("j", "e")), ten),
		catchE(read("&1at2j?^1a", str("[1,[2,null]]")), throwE("x")),
		hashE(cont("at2i1f4", cont("t2i1f4", lit("i1", "-1"), lit("f4", "2.5")))),
		doubling(8),
		let("s", "x", str("a"), interp([]string{"<", ">"}, bound("s", "x"))),
		catchE(load("j", str("missing")), jl(0)),
		let("z", "_", save("msgpack", jl(0), ten, str("f.mpk")), load("aj", str("f.mpk"))),
	} {
		f.Add(e, "*", "", "")
	}
	f.Add(lam(bound("at2sj", "m"), "m"), "at2sj", "at2sj", `{"a":1}`)
	f.Add(lam(bound("a:2?m11af4", "m"), "m"), "a:2?m11af4", "a:2?m11af4", `[null,{"a":1e40}]`)

	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, expr, ret, schema, arg string) {
		// The tree may save files: keep every path inside dir.
		for _, s := range []string{expr, arg} {
			if bytes.ContainsAny([]byte(s), `/\`) || bytes.Contains([]byte(s), []byte("..")) {
				return
			}
		}
		var params []Param
		var args []json.RawMessage
		if schema != "" {
			params = []Param{{Schema: schema}}
			args = []json.RawMessage{json.RawMessage(arg)}
		}
		p, err := Compile(json.RawMessage(expr), params, ret, &Options{
			Dir:    dir,
			Limits: Limits{Steps: 200_000, Bytes: 32 << 20, Depth: 3000},
		})
		if err != nil {
			var ce *CompileError
			if !errors.As(err, &ce) {
				t.Fatalf("Compile gave %T: %v", err, err)
			}
			return
		}
		_ = p.Refusal()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := p.Run(ctx, args)
		if err != nil {
			var pe *panicError
			if errors.As(err, &pe) {
				t.Fatalf("panic: %v", pe)
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("evaluation ran past 10s")
			}
			var e *Error
			var ae *ArgError
			if !errors.As(err, &e) && !errors.As(err, &ae) {
				t.Fatalf("Run gave %T: %v", err, err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Run gave invalid JSON %q", out)
		}
	})
}
