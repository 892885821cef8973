package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// doubling gives "x" doubled n times by nested interpolations: a tiny
// tree whose value is 2^n bytes.
func doubling(n int) string {
	e := str("x")
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("s%d", i)
		e = let("s", v, e, interp([]string{"", "", ""}, bound("s", v), bound("s", v)))
	}
	return e
}

func listOf(n int) string {
	elems := make([]string, n)
	for i := range elems {
		elems[i] = jl(i)
	}
	return cont("aj", elems...)
}

func limitErr(t *testing.T, err error, want string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != Limit || !strings.Contains(e.Msg, want) {
		t.Fatalf("got %v, want a limit error containing %q", err, want)
	}
}

// sharing gives a list tree of depth n whose two halves are one value:
// n lets make 2^n leaves from a tree of n nodes.
func sharing(n int) (expr, schema string) {
	expr, schema = jl(1), "j"
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("x%d", i)
		next := "a" + schema
		expr = let(next, v, expr, cont(next, bound(schema, v), bound(schema, v)))
		schema = next
	}
	return expr, schema
}

func TestSharedValuesAreBounded(t *testing.T) {
	expr, schema := sharing(60)
	opts := &Options{Limits: Limits{Bytes: 1 << 20, Steps: 2_000_000}}
	for name, e := range map[string]string{
		"output": expr,
		"show":   show(expr),
		"hash":   hashE(expr),
		"savej":  save("json", jl(0), expr, str("x.json")),
		"savem":  save("msgpack", jl(0), expr, str("x.mpk")),
	} {
		t.Run(name, func(t *testing.T) {
			ret := schema
			if name != "output" {
				ret = "*"
			}
			start := time.Now()
			_, err := runOpts(&Options{Dir: t.TempDir(), Limits: opts.Limits}, e, nil, ret)
			var le *Error
			if !errors.As(err, &le) || le.Kind != Limit {
				t.Fatalf("got %v, want a limit error", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %s", d)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		_, err := runExpr(doubling(64), nil, "s")
		limitErr(t, err, "memory limit")
	})
	t.Run("memory not caught", func(t *testing.T) {
		_, err := runExpr(catchE(doubling(64), str("")), nil, "s")
		limitErr(t, err, "memory limit")
	})
	t.Run("memory ok below", func(t *testing.T) {
		out, err := runExpr(doubling(10), nil, "s")
		if err != nil || len(out) != 1024+2 {
			t.Fatalf("%d bytes, %v", len(out), err)
		}
	})
	t.Run("steps", func(t *testing.T) {
		l := listOf(100)
		e := mapE("aaj", "a", mapE("aj", "b", hashE(l), l), l) // 100 * 100 hashes of 100 elements
		_, err := runOpts(&Options{Limits: Limits{Steps: 50_000}}, e, nil, "aas")
		limitErr(t, err, "step limit")
	})
	t.Run("depth", func(t *testing.T) {
		e := jl(1)
		for i := 0; i < 200; i++ {
			e = cont("aj", e)
		}
		_, err := runOpts(&Options{Limits: Limits{Depth: 100}}, e, nil, "j")
		limitErr(t, err, "nested too deeply")
	})
	t.Run("deep JSON", func(t *testing.T) {
		e := strings.Repeat(`{"tag":"container","schema":"aj","elements":[`, 6000) + jl(1) + strings.Repeat("]}", 6000)
		_, err := runExpr(e, nil, "j")
		var ce *CompileError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "nested deeper than") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("deep but allowed", func(t *testing.T) {
		e := jl(7)
		schema := "j"
		for i := 0; i < 2000; i++ {
			e = let(schema, fmt.Sprintf("v%d", i), e, bound(schema, fmt.Sprintf("v%d", i)))
		}
		out, err := runExpr(e, nil, "j")
		if err != nil || out != "7" {
			t.Fatalf("%s, %v", out, err)
		}
	})
	t.Run("huge literal", func(t *testing.T) {
		_, err := runExpr(lit("j", strings.Repeat("9", 200_000)), nil, "j")
		if err == nil || !strings.Contains(err.Error(), "nexus reads at most 100000") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("huge argument integer", func(t *testing.T) {
		_, err := runExpr(lam(bound("j", "x"), "x"), []string{"j"}, "j", strings.Repeat("9", 200_000))
		var ae *ArgError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), "at most") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("unguarded recursive schema", func(t *testing.T) {
		for _, s := range []string{"&1a^1a", "&1a?^1a", "&1a&1b^1a", "^1a", "a:", "a:99999999999j"} {
			if _, err := runExpr(cont("?j"), nil, s); err == nil {
				t.Errorf("schema %q accepted", s)
			}
		}
	})
	t.Run("cancelled before", func(t *testing.T) {
		p, _ := Compile(json.RawMessage(jl(1)), nil, "j", nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := p.Run(ctx, nil)
		limitErr(t, err, "cancelled")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%v is not context.Canceled", err)
		}
	})
	t.Run("cancelled during", func(t *testing.T) {
		l := listOf(1000)
		e := mapE("aaj", "a", mapE("aj", "b", hashE(l), l), l) // a billion steps
		p, err := Compile(json.RawMessage(e), nil, "aas", &Options{Limits: Limits{Steps: 1 << 50}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err = p.Run(ctx, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("took %s to notice the deadline", d)
		}
	})
}
