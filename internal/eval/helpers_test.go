package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Builders of expr JSON, after docs/spec.md §7.3.

func q(s string) string { b, _ := json.Marshal(s); return string(b) }

func lit(schema, value string) string {
	return fmt.Sprintf(`{"tag":"lit","schema":%s,"lit_type":%s,"value":%s}`, q(schema), q(schema), q(value))
}
func jl(n int) string     { return lit("j", fmt.Sprint(n)) }
func str(s string) string { return fmt.Sprintf(`{"tag":"str","schema":"s","value":%s}`, q(s)) }
func cont(schema string, elems ...string) string {
	return fmt.Sprintf(`{"tag":"container","schema":%s,"elements":[%s]}`, q(schema), strings.Join(elems, ","))
}
func bound(schema, name string) string {
	return fmt.Sprintf(`{"tag":"bound","schema":%s,"var":%s}`, q(schema), q(name))
}
func lam(body string, vars ...string) string {
	qs := make([]string, len(vars))
	for i, v := range vars {
		qs[i] = q(v)
	}
	return fmt.Sprintf(`{"tag":"lambda","vars":[%s],"body":%s}`, strings.Join(qs, ","), body)
}
func app(schema, fn string, args ...string) string {
	return fmt.Sprintf(`{"tag":"app","schema":%s,"func":%s,"args":[%s]}`, q(schema), fn, strings.Join(args, ","))
}
func let(schema, name, value, body string) string { return app(schema, lam(body, name), value) }
func pat(schema, p string) string {
	return fmt.Sprintf(`{"tag":"pattern","schema":%s,"pattern":%s}`, q(schema), p)
}
func get(schema, p, recv string) string { return app(schema, pat(schema, p), recv) }

const end = `{"type":"end"}`
const slicePat = `{"type":"bracket_slice"}`

func idx(i int, sub string) string { return fmt.Sprintf(`{"index":%d,"sub":%s}`, i, sub) }
func key(k, sub string) string     { return fmt.Sprintf(`{"key":%s,"sub":%s}`, q(k), sub) }
func idxP(sels ...string) string {
	return `{"type":"idx","selectors":[` + strings.Join(sels, ",") + `]}`
}
func keyP(sels ...string) string {
	return `{"type":"key","selectors":[` + strings.Join(sels, ",") + `]}`
}
func bidx(sub string) string {
	if sub == "" {
		return `{"type":"bracket_index"}`
	}
	return `{"type":"bracket_index","sub":` + sub + `}`
}
func interp(strs []string, args ...string) string {
	qs := make([]string, len(strs))
	for i, s := range strs {
		qs[i] = q(s)
	}
	fn := fmt.Sprintf(`{"tag":"interpolation","schema":"s","strings":[%s]}`, strings.Join(qs, ","))
	return app("s", fn, args...)
}
func ifE(schema, c, t, e string) string {
	return fmt.Sprintf(`{"tag":"if","schema":%s,"cond":%s,"then":%s,"else":%s}`, q(schema), c, t, e)
}
func throwE(msg string) string { return fmt.Sprintf(`{"tag":"throw","msg":%s}`, str(msg)) }
func catchE(fallible, fallback string) string {
	return fmt.Sprintf(`{"tag":"catch","fallible":%s,"fallback":%s}`, fallible, fallback)
}
func unary(tag, schema, child string) string {
	return fmt.Sprintf(`{"tag":%s,"schema":%s,"child":%s}`, q(tag), q(schema), child)
}
func show(child string) string         { return unary("show", "s", child) }
func read(schema, child string) string { return unary("read", schema, child) }
func hashE(child string) string        { return unary("hash", "s", child) }
func load(schema, child string) string { return unary("load", schema, child) }
func save(format, level, value, path string) string {
	return fmt.Sprintf(`{"tag":"save","format":%s,"schema":"z","level":%s,"value":%s,"path":%s}`, q(format), level, value, path)
}
func mapE(schema, v, body, list string) string {
	return fmt.Sprintf(`{"tag":"map","schema":%s,"func":%s,"list":%s}`, q(schema), lam(body, v), list)
}

// runExpr compiles expr with the given argument schemas and return schema
// and runs it on the given JSON arguments.
func runExpr(expr string, params []string, ret string, args ...string) (string, error) {
	return runOpts(nil, expr, params, ret, args...)
}

func runOpts(opts *Options, expr string, params []string, ret string, args ...string) (string, error) {
	ps := make([]Param, len(params))
	for i, s := range params {
		ps[i] = Param{Schema: s}
	}
	p, err := Compile(json.RawMessage(expr), ps, ret, opts)
	if err != nil {
		return "", err
	}
	raw := make([]json.RawMessage, len(args))
	for i, a := range args {
		raw[i] = json.RawMessage(a)
	}
	out, err := p.Run(context.Background(), raw)
	return string(out), err
}

// evalCase is one row of a table-driven test: an expression and either
// its output or the error it gives.
type evalCase struct {
	name   string
	expr   string
	params []string
	ret    string
	args   []string
	want   string // the output, when err is ""
	err    string // a substring of the error message
	kind   ErrorKind
}

func runCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := runExpr(c.expr, c.params, c.ret, c.args...)
			if c.err == "" {
				if err != nil {
					t.Fatalf("error %v, want %s", err, c.want)
				}
				if got != c.want {
					t.Fatalf("got  %s\nwant %s", got, c.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %s, want an error containing %q", got, c.err)
			}
			if !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %q, want it to contain %q", err, c.err)
			}
			var e *Error
			if errors.As(err, &e) && e.Kind != c.kind {
				t.Fatalf("error kind %s, want %s (%v)", e.Kind, c.kind, err)
			}
		})
	}
}
