package eval

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

func TestLit(t *testing.T) {
	runCases(t, []evalCase{
		{name: "j", expr: jl(-42), ret: "j", want: "-42"},
		{name: "j huge", expr: lit("j", "100000000000000000000000000000"), ret: "j", want: "100000000000000000000000000000"},
		{name: "j not decimal", expr: lit("j", "0x2a"), ret: "j", err: "invalid integer literal"},
		{name: "j empty", expr: lit("j", ""), ret: "j", err: "no digits"},
		{name: "i1", expr: lit("i1", "-128"), ret: "i1", want: "-128"},
		{name: "i1 overflow", expr: lit("i1", "128"), ret: "i1", err: "does not fit i1 (range -128 to 127)"},
		{name: "u8 max", expr: lit("u8", "18446744073709551615"), ret: "u8", want: "18446744073709551615"},
		{name: "u1 negative", expr: lit("u1", "-1"), ret: "u1", err: "does not fit u1"},
		{name: "f8", expr: lit("f8", "420000.0"), ret: "f8", want: "420000"},
		{name: "f8 scientific", expr: lit("f8", "4.2e-2"), ret: "f8", want: "0.042"},
		{name: "f8 tiny", expr: lit("f8", "1.0e-7"), ret: "f8", want: "1e-7"},
		{name: "f8 huge", expr: lit("f8", "1.0e21"), ret: "f8", want: "1e+21"},
		{name: "f8 shortest", expr: lit("f8", "0.30000000000000004"), ret: "f8", want: "0.30000000000000004"},
		{name: "f4 shortest", expr: lit("f4", "3.14"), ret: "f4", want: "3.14"},
		{name: "f4 rounds", expr: lit("f4", "0.1"), ret: "f8", want: "0.10000000149011612"},
		{name: "nan as the wire's string", expr: lit("f8", "nan"), ret: "f8", want: `"NaN"`},
		{name: "inf as the wire's string", expr: lit("f8", "inf"), ret: "f8", want: `"Infinity"`},
		{name: "-inf as the wire's string", expr: lit("f8", "-inf"), ret: "f8", want: `"-Infinity"`},
		{name: "nan in a list", expr: cont("af4", lit("f4", "nan"), lit("f4", "1.5")), ret: "af4", want: `["NaN",1.5]`},
		{name: "f8 bad", expr: lit("f8", "pi"), ret: "f8", err: `invalid f8 literal "pi"`},
		{name: "b true", expr: lit("b", "1"), ret: "b", want: "true"},
		{name: "b nonzero", expr: lit("b", "7"), ret: "b", want: "true"},
		{name: "b false", expr: lit("b", "0"), ret: "b", want: "false"},
		{name: "z", expr: lit("z", "0"), ret: "z", want: "null"},
		{name: "unknown lit_type", expr: `{"tag":"lit","schema":"s","lit_type":"str","value":"x"}`, ret: "s", err: "expr.lit_type: Unknown lit_type: str"},
		{name: "schema differs", expr: `{"tag":"lit","schema":"i4","lit_type":"j","value":"1"}`, ret: "j", err: "does not match lit_type j"},
		{name: "value not a string", expr: `{"tag":"lit","schema":"j","lit_type":"j","value":42}`, ret: "j", err: `expr.value: expected a string, got 42`},
	})
}

func TestStr(t *testing.T) {
	runCases(t, []evalCase{
		{name: "plain", expr: str("hello"), ret: "s", want: `"hello"`},
		{name: "escapes", expr: str("a\"b\\c\n\t\r\b\f\x01/é ☃"), ret: "s", want: `"a\"b\\c\n\t\r\b\f\u0001/é ☃"`},
		{name: "NUL kept", expr: str("a\x00b"), ret: "s", want: `"a\u0000b"`},
		{name: "schema not s", expr: `{"tag":"str","schema":"j","value":"x"}`, ret: "j", err: "not a string"},
	})
}

func TestContainer(t *testing.T) {
	runCases(t, []evalCase{
		{name: "list", expr: cont("aj", jl(1), jl(2)), ret: "aj", want: "[1,2]"},
		{name: "empty list", expr: cont("aj"), ret: "aj", want: "[]"},
		{name: "tuple", expr: cont("t2js", jl(42), str("world")), ret: "t2js", want: `[42,"world"]`},
		{name: "record in schema order", expr: cont("m21aj1bs", jl(1), str("x")), ret: "m21aj1bs", want: `{"a":1,"b":"x"}`},
		{name: "optional present", expr: cont("?j", jl(7)), ret: "?j", want: "7"},
		{name: "optional absent", expr: cont("?j"), ret: "?j", want: "null"},
		{name: "nested", expr: cont("at2jaj", cont("t2jaj", jl(1), cont("aj"))), ret: "at2jaj", want: "[[1,[]]]"},
		{name: "fixed-length list", expr: cont("a:2a:3j", cont("a:3j", jl(1), jl(2), jl(3)), cont("a:3j", jl(4), jl(5), jl(6))), ret: "a:2a:3j", want: "[[1,2,3],[4,5,6]]"},
		{name: "tuple too short", expr: cont("t2jj", jl(1)), ret: "t2jj", err: "expr.elements: the tuple schema has 2 fields but the container has 1 elements"},
		{name: "optional of two", expr: cont("?j", jl(1), jl(2)), ret: "?j", err: "holds 0 or 1 elements"},
		{name: "not a container", expr: cont("j"), ret: "j", err: "Container schema is not a container type"},
		{name: "recursive", expr: cont("&4Listt2j?^4List", jl(42), cont("?&4Listt2j?^4List", cont("&4Listt2j?^4List", jl(7), cont("?&4Listt2j?^4List")))), ret: "&4Listt2j?^4List", want: "[42,[7,null]]"},
	})
}

func TestBoundAndLet(t *testing.T) {
	runCases(t, []evalCase{
		{name: "let", expr: let("j", "x", jl(42), bound("j", "x")), ret: "j", want: "42"},
		{name: "shadow", expr: let("j", "x", jl(1), let("j", "x", jl(2), bound("j", "x"))), ret: "j", want: "2"},
		{name: "self-ref is the outer x", expr: let("j", "x", jl(1), let("j", "x", bound("j", "x"), bound("j", "x"))), ret: "j", want: "1"},
		{name: "outer visible", expr: let("t2jj", "x", jl(1), let("t2jj", "y", jl(2), cont("t2jj", bound("j", "x"), bound("j", "y")))), ret: "t2jj", want: "[1,2]"},
		{name: "scope ends with the body", expr: cont("t2jj", let("j", "x", jl(1), bound("j", "x")), bound("j", "x")), ret: "t2jj", err: "Unbound variable x", kind: Internal},
		{name: "unbound", expr: bound("j", "nope"), ret: "j", err: "Unbound variable nope", kind: Internal},
		{name: "unbound is not caught", expr: catchE(bound("j", "nope"), jl(1)), ret: "j", err: "Unbound variable nope", kind: Internal},
		{name: "a cycle of names is unbound", expr: let("j", "x", bound("j", "x"), bound("j", "x")), ret: "j", err: "Unbound variable x", kind: Internal},
		{name: "unbound in an untaken branch", expr: ifE("j", lit("b", "1"), jl(1), bound("j", "nope")), ret: "j", want: "1"},
		{name: "args are eager", expr: let("j", "_do_1", throwE("first"), jl(42)), ret: "j", err: "first", kind: Thrown},
		{name: "args left to right", expr: app("j", lam(jl(0), "a", "b"), throwE("left"), throwE("right")), ret: "j", err: "left", kind: Thrown},
		{name: "lambda arity", expr: app("j", lam(jl(0), "a", "b"), jl(1)), ret: "j", err: "expr: the lambda takes 2 variables but the app gives 1 arguments"},
		{name: "lambda as a value", expr: cont("aj", lam(jl(1), "x")), ret: "aj", err: "expr.elements[0]: a lambda is valid only"},
		{name: "invalid func", expr: app("j", jl(1)), ret: "j", err: `expr.func: Invalid function in app expression: "lit"`},
	})
}

func TestTopLevel(t *testing.T) {
	runCases(t, []evalCase{
		{name: "lambda binds args", expr: lam(cont("t2sj", bound("s", "b"), bound("j", "a")), "a", "b"), params: []string{"j", "s"}, ret: "t2sj", args: []string{"1", `"x"`}, want: `["x",1]`},
		{name: "flag binds a bool", expr: lam(ifE("s", bound("b", "f"), str("on"), str("off")), "f"), params: []string{"b"}, ret: "s", args: []string{"false"}, want: `"off"`},
		{name: "group binds the record", expr: lam(get("j", keyP(key("n", end)), bound("m21nj1ss", "g")), "g"), params: []string{"m21nj1ss"}, ret: "j", args: []string{`{"s":"x","n":5}`}, want: "5"},
		{name: "map as an object", expr: lam(bound("at2sj", "m"), "m"), params: []string{"at2sj"}, ret: "at2sj", args: []string{`{"b":2,"a":1}`}, want: `[["b",2],["a",1]]`},
		{name: "map as pairs", expr: lam(bound("at2sj", "m"), "m"), params: []string{"at2sj"}, ret: "at2sj", args: []string{`[["a",1]]`}, want: `[["a",1]]`},
		{name: "top pattern getter", expr: pat("j", keyP(key("x", end))), params: []string{"m21xj1yj"}, ret: "j", args: []string{`{"x":3,"y":4}`}, want: "3"},
		{name: "constant with a let ignores args", expr: let("j", "x", jl(5), bound("j", "x")), params: []string{"j"}, ret: "j", args: []string{"1"}, want: "5"},
		{name: "constant ignores args", expr: jl(5), params: []string{"j"}, ret: "j", args: []string{"1"}, want: "5"},
		{name: "vars and args differ", expr: lam(jl(1), "a"), params: []string{"j", "j"}, ret: "j", args: []string{"1", "2"}, err: "expr.vars: the lambda takes 1 variables but the command has 2 arguments"},
		{name: "big integer argument", expr: lam(bound("j", "x"), "x"), params: []string{"j"}, ret: "j", args: []string{"-123456789012345678901234567890"}, want: "-123456789012345678901234567890"},
		{name: "real argument", expr: lam(bound("f8", "x"), "x"), params: []string{"f8"}, ret: "f8", args: []string{"2.0"}, want: "2"},
		{name: "bad argument", expr: lam(bound("j", "x"), "x"), params: []string{"j"}, ret: "j", args: []string{`"seven"`}, err: `failed to parse argument #0: expected integer for Int, got "seven"`},
		{name: "fixed length argument", expr: lam(bound("a:3j", "x"), "x"), params: []string{"a:3j"}, ret: "a:3j", args: []string{"[1,2,3,4]"}, err: "failed to parse argument #0: Array length mismatch: expected 3, got 4"},
		{name: "sized argument out of range", expr: lam(bound("i1", "x"), "x"), params: []string{"i1"}, ret: "i1", args: []string{"200"}, err: "value 200 out of range for I8 (range -128 to 127)"},
		{name: "record field missing", expr: lam(bound("m21xj1yj", "p"), "p"), params: []string{"m21xj1yj"}, ret: "m21xj1yj", args: []string{`{"x":1}`}, err: "missing required field 'y' in record"},
		{name: "nested path in message", expr: lam(bound("at2js", "p"), "p"), params: []string{"at2js"}, ret: "at2js", args: []string{`[[1,"a"],[2,3]]`}, err: "expected string, got 3 (at [1][1])"},
		{name: "too few args", expr: lam(bound("j", "x"), "x"), params: []string{"j"}, ret: "j", err: "expected 1 arguments, got 0"},
		{name: "result not its type", expr: str("x"), ret: "j", err: "type mismatch: expected integer (j), found string", kind: Internal},
	})
}

func TestPatterns(t *testing.T) {
	tup := cont("t2jt3bsf8", jl(67), cont("t3bsf8", lit("b", "1"), str("Nessie"), lit("f8", "6.7")))
	rec := cont("m31xj1ys1zj", jl(7), str("hi"), jl(8))
	ten := cont("aj", jl(0), jl(1), jl(2), jl(3), jl(4), jl(5), jl(6), jl(7), jl(8), jl(9))
	none := cont("?j")
	sl := func(start, stop, step string) string { return app("aj", pat("aj", slicePat), start, stop, step, ten) }
	team := cont("m17membersam24names3agej",
		cont("am24names3agej", cont("m24names3agej", str("Alice"), jl(30)), cont("m24names3agej", str("Bob"), jl(25))))
	runCases(t, []evalCase{
		{name: "getter", expr: get("j", idxP(idx(0, end)), tup), ret: "j", want: "67"},
		{name: "getter of a tuple value", expr: get("t3bsf8", idxP(idx(1, end)), tup), ret: "t3bsf8", want: `[true,"Nessie",6.7]`},
		{name: "group", expr: get("t2js", idxP(idx(0, end), idx(1, idxP(idx(1, end)))), tup), ret: "t2js", want: `[67,"Nessie"]`},
		{name: "single group", expr: get("j", idxP(idx(1, end)), cont("t2jj", jl(1), jl(2))), ret: "j", want: "2"},
		{name: "keys", expr: get("t2jj", keyP(key("x", end), key("z", end)), rec), ret: "t2jj", want: "[7,8]"},
		{name: "key missing", expr: get("j", keyP(key("w", end)), rec), ret: "j", err: "Pattern contains key missing in schema: w", kind: Internal},
		{name: "key on a tuple", expr: get("j", keyP(key("x", end)), tup), ret: "j", err: "Pattern contains key missing in schema: x", kind: Internal},
		{name: "index out of range", expr: get("j", idxP(idx(5, end)), tup), ret: "j", err: "Pattern child index 5 out of range for schema size 2", kind: Internal},
		{name: "pattern error not caught", expr: catchE(get("j", keyP(key("w", end)), rec), jl(0)), ret: "j", err: "missing in schema", kind: Internal},
		{name: "setter", expr: app("m31xj1ys1zj", pat("m31xj1ys1zj", keyP(key("x", end))), rec, jl(99)), ret: "m31xj1ys1zj", want: `{"x":99,"y":"hi","z":8}`},
		{name: "setter order", expr: app("m31xj1ys1zj", pat("m31xj1ys1zj", keyP(key("z", end), key("y", end))), rec, jl(1), str("w")), ret: "m31xj1ys1zj", want: `{"x":7,"y":"w","z":1}`},
		{name: "setter nested", expr: app("t2jt3bsf8", pat("t2jt3bsf8", idxP(idx(1, idxP(idx(1, end))))), tup, str("Loch")), ret: "t2jt3bsf8", want: `[67,[true,"Loch",6.7]]`},
		{name: "setter leaves receiver", expr: let("t2jj", "r", cont("t2jj", jl(1), jl(2)), cont("t2t2jjt2jj", app("t2jj", pat("t2jj", idxP(idx(0, end))), bound("t2jj", "r"), jl(9)), bound("t2jj", "r"))), ret: "t2t2jjt2jj", want: "[[9,2],[1,2]]"},
		{name: "setter arity", expr: app("t2jj", pat("t2jj", idxP(idx(0, end), idx(1, end))), cont("t2jj", jl(1), jl(2)), jl(9)), ret: "t2jj", err: "a setter with 2 selected fields takes the receiver and 2 values, got 2 arguments"},
		{name: "no args", expr: app("j", pat("j", idxP(idx(0, end)))), ret: "j", err: "No arguments provided to pattern"},
		{name: "index", expr: app("j", pat("j", bidx("")), jl(2), ten), ret: "j", want: "2"},
		{name: "index negative", expr: app("j", pat("j", bidx("")), jl(-1), ten), ret: "j", want: "9"},
		{name: "index i1", expr: app("j", pat("j", bidx("")), lit("i1", "3"), ten), ret: "j", want: "3"},
		{name: "index u4", expr: app("j", pat("j", bidx("")), lit("u4", "4"), ten), ret: "j", want: "4"},
		{name: "index optional", expr: app("j", pat("j", bidx("")), cont("?i8", lit("i8", "5")), ten), ret: "j", want: "5"},
		{name: "index null", expr: app("j", pat("j", bidx("")), none, ten), ret: "j", err: "Bracket index cannot be Null", kind: Internal},
		{name: "index out of bounds", expr: app("j", pat("j", bidx("")), jl(10), ten), ret: "j", err: "Bracket index 10 out of bounds for array of size 10", kind: Internal},
		{name: "index huge", expr: app("j", pat("j", bidx("")), lit("j", "100000000000000000000"), ten), ret: "j", err: "does not fit in i64", kind: Internal},
		{name: "slice full", expr: sl(none, none, none), ret: "aj", want: "[0,1,2,3,4,5,6,7,8,9]"},
		{name: "slice open left", expr: sl(jl(3), none, none), ret: "aj", want: "[3,4,5,6,7,8,9]"},
		{name: "slice open right", expr: sl(none, jl(3), none), ret: "aj", want: "[0,1,2]"},
		{name: "slice step", expr: sl(none, none, jl(2)), ret: "aj", want: "[0,2,4,6,8]"},
		{name: "slice step closed", expr: sl(jl(1), jl(7), jl(2)), ret: "aj", want: "[1,3,5]"},
		{name: "slice empty", expr: sl(jl(5), jl(1), none), ret: "aj", want: "[]"},
		{name: "slice reverse", expr: sl(none, none, jl(-1)), ret: "aj", want: "[9,8,7,6,5,4,3,2,1,0]"},
		{name: "slice reverse bounds", expr: sl(jl(7), jl(2), jl(-2)), ret: "aj", want: "[7,5,3]"},
		{name: "slice negative bounds", expr: sl(jl(-3), jl(-1), none), ret: "aj", want: "[7,8]"},
		{name: "slice clamped", expr: sl(jl(-100), jl(100), none), ret: "aj", want: "[0,1,2,3,4,5,6,7,8,9]"},
		{name: "slice reverse clamped", expr: sl(jl(100), jl(-100), jl(-3)), ret: "aj", want: "[9,6,3,0]"},
		{name: "slice huge step", expr: sl(jl(1), none, lit("j", "9223372036854775807")), ret: "aj", want: "[1]"},
		{name: "slice huge negative step", expr: sl(none, none, lit("j", "-9223372036854775808")), ret: "aj", want: "[9]"},
		{name: "slice step 0", expr: sl(none, none, jl(0)), ret: "aj", err: "Bracket slice step cannot be 0", kind: Internal},
		{name: "slice i1 bound", expr: sl(lit("i1", "0"), jl(3), none), ret: "aj", want: "[0,1,2]"},
		{name: "key then bracket then key", expr: app("s", pat("s", keyP(key("members", bidx(keyP(key("name", end)))))), jl(1), team), ret: "s", want: `"Bob"`},
		{name: "bracket chain at the top", expr: app("j", pat("j", bidx(keyP(key("age", end)))), jl(0), get("am24names3agej", keyP(key("members", end)), team)), ret: "j", want: "30"},
		{name: "slice in a chain", expr: app("t2ajj", pat("t2ajj", idxP(idx(0, slicePat), idx(1, end))), jl(1), none, none, cont("t2ajj", cont("aj", jl(1), jl(2), jl(3)), jl(4))), ret: "t2ajj", want: "[[2,3],4]"},
		{name: "bracket arity", expr: app("j", pat("j", keyP(key("members", bidx(end)))), team), ret: "j", err: "the pattern has bracket steps taking 1 bounds, so it takes 2 arguments"},
		{name: "leaf index inside a chain", expr: app("j", pat("j", keyP(key("members", bidx("")))), jl(0), team), ret: "j", err: "a bracket_index inside a selector chain needs a \"sub\""},
		{name: "unknown pattern type", expr: get("j", `{"type":"star"}`, tup), ret: "j", err: "expr.func.pattern.type: Unknown pattern type: star"},
		{name: "selector without sub", expr: get("j", `{"type":"idx","selectors":[{"index":0}]}`, tup), ret: "j", err: "expr.func.pattern.selectors[0]: selector has no \"sub\" pattern"},
	})
}

func TestInterpolationAndMap(t *testing.T) {
	x := bound("s", "x")
	runCases(t, []evalCase{
		{name: "interpolation", expr: lam(interp([]string{"", "+", "=", "", ""}, x, str("y"), x, str("y")), "x"), params: []string{"s"}, ret: "s", args: []string{`"a"`}, want: `"a+y=ay"`},
		{name: "edges", expr: lam(cont("as", interp([]string{"<", ">"}, x), interp([]string{"", ""}, x), interp([]string{"", ".", ""}, x, x)), "x"), params: []string{"s"}, ret: "as", args: []string{`"q"`}, want: `["<q>","q","q.q"]`},
		{name: "no args", expr: interp([]string{"plain"}), ret: "s", want: `"plain"`},
		{name: "NUL kept", expr: interp([]string{"a\x00", ""}, str("\x00b")), ret: "s", want: `"a\u0000\u0000b"`},
		{name: "arity", expr: interp([]string{"", ""}), ret: "s", err: "the interpolation has 2 strings, so it takes 1 arguments, but the app gives 0"},
		{name: "not a string", expr: interp([]string{"", ""}, jl(1)), ret: "s", err: "interpolation argument 0 is integer, not a string", kind: Internal},
		{name: "map", expr: mapE("aj", "e", get("j", idxP(idx(1, end)), bound("t2jj", "e")), cont("at2jj", cont("t2jj", jl(1), jl(2)), cont("t2jj", jl(3), jl(4)))), ret: "aj", want: "[2,4]"},
		{name: "map empty", expr: mapE("aj", "e", bound("j", "e"), cont("aj")), ret: "aj", want: "[]"},
		{name: "map sees outer", expr: let("aj", "k", jl(5), mapE("aj", "e", bound("j", "k"), cont("aj", jl(1), jl(2)))), ret: "aj", want: "[5,5]"},
		{name: "map func not lambda", expr: `{"tag":"map","schema":"aj","func":` + pat("j", end) + `,"list":` + cont("aj") + `}`, ret: "aj", err: "expr.func: Map func must be a lambda"},
		{name: "map two vars", expr: `{"tag":"map","schema":"aj","func":` + lam(jl(1), "a", "b") + `,"list":` + cont("aj") + `}`, ret: "aj", err: "Map lambda must take exactly one argument"},
	})
}

func TestIfThrowCatch(t *testing.T) {
	runCases(t, []evalCase{
		{name: "if true", expr: ifE("j", lit("b", "1"), jl(1), jl(2)), ret: "j", want: "1"},
		{name: "if false", expr: ifE("j", lit("b", "0"), jl(1), jl(2)), ret: "j", want: "2"},
		{name: "only the branch taken", expr: ifE("j", lit("b", "1"), jl(1), throwE("no")), ret: "j", want: "1"},
		{name: "cond not bool", expr: ifE("j", jl(1), jl(1), jl(2)), ret: "j", err: "an if condition is integer", kind: Internal},
		{name: "throw", expr: throwE("PURE: boom int"), ret: "j", err: "PURE: boom int", kind: Thrown},
		{name: "catch", expr: catchE(throwE("boom"), jl(42)), ret: "j", want: "42"},
		{name: "catch passes a value", expr: catchE(jl(1), jl(42)), ret: "j", want: "1"},
		{name: "tiered", expr: catchE(throwE("a"), catchE(throwE("b"), jl(999))), ret: "j", want: "999"},
		{name: "throw from the fallback", expr: catchE(throwE("a"), throwE("b")), ret: "j", err: "b", kind: Thrown},
		{name: "throw message computed", expr: `{"tag":"throw","msg":` + interp([]string{"bad ", ""}, str("x")) + `}`, ret: "j", err: "bad x", kind: Thrown},
		{name: "catch deep inside", expr: catchE(cont("aj", jl(1), throwE("x")), cont("aj")), ret: "aj", want: "[]"},
	})
}

func TestShowRead(t *testing.T) {
	pt := "m21xj1yj"
	runCases(t, []evalCase{
		{name: "show int", expr: show(jl(42)), ret: "s", want: `"42"`},
		{name: "show real", expr: show(lit("f8", "3.14")), ret: "s", want: `"3.14"`},
		{name: "show %.15g", expr: show(lit("f8", "0.30000000000000004")), ret: "s", want: `"0.3"`},
		{name: "show big real", expr: show(lit("f8", "1.0e15")), ret: "s", want: `"1e+15"`},
		{name: "show f4 %.7g", expr: show(lit("f4", "3.14159265")), ret: "s", want: `"3.141593"`},
		{name: "show nan", expr: show(lit("f8", "nan")), ret: "s", want: `"\"nan\""`},
		{name: "show -inf", expr: show(lit("f8", "-inf")), ret: "s", want: `"\"-inf\""`},
		{name: "show bool", expr: show(lit("b", "1")), ret: "s", want: `"true"`},
		{name: "show string", expr: show(str("hello")), ret: "s", want: `"\"hello\""`},
		{name: "show escapes /", expr: show(str("a/b\n")), ret: "s", want: `"\"a\\/b\\n\""`},
		{name: "show record", expr: show(cont(pt, jl(1), jl(2))), ret: "s", want: `"{\"x\":1,\"y\":2}"`},
		{name: "show show", expr: show(show(jl(42))), ret: "s", want: `"\"42\""`},
		{name: "show null", expr: show(cont("?j")), ret: "s", want: `"null"`},
		{name: "show empty list", expr: show(cont("aj")), ret: "s", want: `"[]"`},
		{name: "read int", expr: catchE(read("j", str("42")), jl(-1)), ret: "j", want: "42"},
		{name: "read real", expr: catchE(read("f8", str("3.14")), lit("f8", "-1.0")), ret: "f8", want: "3.14"},
		{name: "read bool", expr: read("b", str("true")), ret: "b", want: "true"},
		{name: "read str", expr: read("s", str(`"hello"`)), ret: "s", want: `"hello"`},
		{name: "read list", expr: read("aj", str("[1,2,3]")), ret: "aj", want: "[1,2,3]"},
		{name: "read tuple", expr: read("t2js", str(`[10,"abc"]`)), ret: "t2js", want: `[10,"abc"]`},
		{name: "read record", expr: read(pt, str(`{"y":2,"x":1,"extra":0}`)), ret: pt, want: `{"x":1,"y":2}`},
		{name: "read record array form", expr: read(pt, str(`[1,2]`)), ret: pt, want: `{"x":1,"y":2}`},
		{name: "read big int", expr: read("j", str("-100000000000000000000000000000")), ret: "j", want: "-100000000000000000000000000000"},
		{name: "read j from digits string", expr: read("j", str(`"42"`)), ret: "j", want: "42"},
		{name: "read nan string", expr: show(read("f8", str(`"nan"`))), ret: "s", want: `"\"nan\""`},
		{name: "read optional", expr: read("?j", str("null")), ret: "?j", want: "null"},
		{name: "read invalid", expr: catchE(read("j", str("not_a_number")), jl(-1)), ret: "j", want: "-1"},
		{name: "read invalid message", expr: read("j", str("not_a_number")), ret: "j", err: "invalid JSON at offset 0", kind: Thrown},
		{name: "read mismatch", expr: read("j", str(`"hello"`)), ret: "j", err: `expected integer for Int, got "hello"`, kind: Thrown},
		{name: "read j from a non-digit string", expr: read("j", str(`"12x"`)), ret: "j", err: `invalid integer literal: "12x"`, kind: Thrown},
		{name: "read empty", expr: read("j", str("")), ret: "j", err: "@read: empty input string", kind: Thrown},
		{name: "read real for int", expr: read("j", str("2.5")), ret: "j", err: "expected integer for Int, got 2.5", kind: Thrown},
		{name: "read trailing", expr: read("j", str("1 2")), ret: "j", err: "after the JSON value", kind: Thrown},
		{name: "read missing field", expr: read(pt, str(`{"x":1}`)), ret: pt, err: "missing required field 'y' in record", kind: Thrown},
		{name: "read fixed length", expr: read("a:2j", str("[1]")), ret: "a:2j", err: "Array length mismatch: expected 2, got 1", kind: Thrown},
		{name: "round trip", expr: read("at2jaj", show(cont("at2jaj", cont("t2jaj", jl(1), cont("aj", jl(2)))))), ret: "at2jaj", want: "[[1,[2]]]"},
		{name: "round trip escapes", expr: read("s", show(str("a/\"\\\n"))), ret: "s", want: `"a/\"\\\n"`},
	})
}

func TestHash(t *testing.T) {
	runCases(t, []evalCase{
		// The three values verified against morloc (golden test intrinsic-agnostic).
		{name: "hello", expr: hashE(str("hello")), ret: "s", want: `"447c3bd1a33eb4df"`},
		{name: "42", expr: hashE(jl(42)), ret: "s", want: `"a311d4bf7eb5bec4"`},
		{name: "(1,2,3)", expr: hashE(cont("t3jjj", jl(1), jl(2), jl(3))), ret: "s", want: `"48fe6b3478393bbf"`},
		{name: "optional refused", expr: hashE(cont("?j", jl(1))), ret: "s", err: "cannot hash an optional value", kind: Internal},
		{name: "optional not caught", expr: catchE(hashE(cont("m11a?j", cont("?j"))), str("x")), ret: "s", err: "cannot hash an optional value", kind: Internal},
	})
	// Structural: equal values hash equal, different shapes differ.
	h := func(expr string) string {
		out, err := runExpr(hashE(expr), nil, "s")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	distinct := map[string]string{
		"[] of j": h(cont("aj")),
		// An empty list hashes without its element type, as in morloc:
		// [] :: [Str] hashes as [] :: [Int].
		"empty str":     h(str("")),
		"[1]":           h(cont("aj", jl(1))),
		"[[1]]":         h(cont("aaj", cont("aj", jl(1)))),
		"[1] as i4":     h(cont("ai4", lit("i4", "1"))),
		"[1] as u4":     h(cont("au4", lit("u4", "1"))),
		"(1,2) i4":      h(cont("t2i4i4", lit("i4", "1"), lit("i4", "2"))),
		"(1,2) j":       h(cont("t2jj", jl(1), jl(2))),
		"{a=1,b=2}":     h(cont("m21aj1bj", jl(1), jl(2))),
		"2^64":          h(lit("j", "18446744073709551616")),
		"-2^64":         h(lit("j", "-18446744073709551616")),
		"padded tuple":  h(cont("t2i1f8", lit("i1", "1"), lit("f8", "1.0"))),
		"list of tuple": h(cont("at2i1f8", cont("t2i1f8", lit("i1", "1"), lit("f8", "1.0")))),
		"true":          h(lit("b", "1")),
		"unit":          h(lit("z", "0")),
		"f4":            h(lit("f4", "1.0")),
		"f8":            h(lit("f8", "1.0")),
	}
	seen := map[string]string{}
	for name, v := range distinct {
		if len(v) != 18 {
			t.Errorf("%s: hash %s is not 16 hex digits", name, v)
		}
		if other, ok := seen[v]; ok {
			t.Errorf("%s and %s hash alike: %s", name, other, v)
		}
		seen[v] = name
	}
	if a, b := h(cont("t2jj", jl(1), jl(2))), h(let("t2jj", "p", cont("t2jj", jl(1), jl(2)), bound("t2jj", "p"))); a != b {
		t.Errorf("the same value hashes differently: %s, %s", a, b)
	}
}

func TestXXH64(t *testing.T) {
	// Reference vectors of xxHash64.
	for _, c := range []struct {
		in   string
		seed uint64
		want uint64
	}{
		{"", 0, 0xef46db3751d8e999},
		{"a", 0, 0xd24ec4f1a98c6e5b},
		{"abc", 0, 0x44bc2cf5ad770999},
		{"Nobody inspects the spammish repetition", 0, 0xfbcea83c8a378bf1},
	} {
		if got := xxh64([]byte(c.in), c.seed); got != c.want {
			t.Errorf("xxh64(%q, %d) = %016x, want %016x", c.in, c.seed, got, c.want)
		}
	}
}

func TestIntrinsicsAndRefusal(t *testing.T) {
	open := `{"tag":"open","schema":"F","kind":0,"path":` + str("x.dat") + `}`
	p, err := Compile(json.RawMessage(let("z", "h", open, lit("z", "0"))), nil, "z", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Intrinsics(); len(got) != 1 || got[0] != "@open" {
		t.Errorf("Intrinsics() = %v", got)
	}
	if r := p.Refusal(); !strings.Contains(r, "@open") {
		t.Errorf("Refusal() = %q, want it to name @open", r)
	}
	_, err = p.Run(context.Background(), nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != Unsupported || !strings.Contains(e.Msg, "@open is not supported") || e.Path != "expr.args[0]" {
		t.Errorf("Run: %v (%#v)", err, e)
	}
	// Every handle and stream tag compiles and is refused.
	for tag, name := range refusedIntrinsics {
		p, err := Compile(json.RawMessage(`{"tag":"`+tag+`","handle":`+bound("O", "o")+`}`), nil, "z", nil)
		if err != nil {
			t.Fatalf("%s: %v", tag, err)
		}
		if !strings.Contains(p.Refusal(), name) {
			t.Errorf("%s: Refusal() = %q", tag, p.Refusal())
		}
	}
	// @close of a Str is morloc's temp-file unlink: it fails, catchably.
	closeStr := `{"tag":"close","handle":` + str("t.txt") + `}`
	runCases(t, []evalCase{
		{name: "close str", expr: closeStr, ret: "z", err: "@close: 't.txt' is not a registered temp file", kind: Thrown},
		{name: "close str caught", expr: catchE(closeStr, lit("z", "0")), ret: "z", want: "null"},
		{name: "refused is not caught", expr: catchE(open, str("x")), ret: "s", err: "@open is not supported", kind: Unsupported},
		{name: "unknown tag", expr: cont("aj", jl(1), `{"tag":"foo"}`), ret: "aj", err: `expr.elements[1]: unknown tag "foo"`},
		{name: "no tag", expr: app("j", lam(jl(1), "x"), `{"schema":"j"}`), ret: "j", err: `expr.args[0]: expression has no "tag"`},
		{name: "bad schema", expr: cont("aq"), ret: "aj", err: `expr.schema: bad schema "aq" at offset 1: unknown type code 'q'`},
	})
	p, _ = Compile(json.RawMessage(catchE(show(read("j", str("1"))), hashE(str("x")))), nil, "s", nil)
	if got := strings.Join(p.Intrinsics(), " "); got != "@catch @hash @read @show" || p.Refusal() != "" {
		t.Errorf("Intrinsics() = %q, Refusal() = %q", got, p.Refusal())
	}
}

func TestCompileErrors(t *testing.T) {
	for _, c := range []struct {
		expr   string
		params []Param
		ret    string
		want   string
	}{
		{``, nil, "j", "expr: the pure command has no expression"},
		{`{"tag":`, nil, "j", "expr: invalid JSON"},
		{`[1]`, nil, "j", "expr: expected an expression object, got an array"},
		{jl(1), nil, "q", `return.schema: bad schema "q"`},
		{jl(1), []Param{{Schema: "a"}}, "j", `args[0].schema: bad schema "a"`},
		{`{"tag":"if","schema":"j","cond":` + lit("b", "1") + `,"then":` + jl(1) + `}`, nil, "j", `expr: missing field "else"`},
		{app("j", lam(jl(1), "x"), `{"tag":"catch","fallible":`+jl(1)+`}`), nil, "j", `expr.args[0]: missing field "fallback"`},
		{lam(get("j", idxP(idx(0, end)), `{"tag":"bound","schema":"t1j"}`), "x"), []Param{{Schema: "j"}}, "j", `expr.body.args[0]: missing field "var"`},
		{lam(app("j", lam(jl(1), "y"), `{"tag":"foo"}`), "x"), []Param{{Schema: "j"}}, "j", `expr.body.args[0]: unknown tag "foo"`},
	} {
		_, err := Compile(json.RawMessage(c.expr), c.params, c.ret, nil)
		var ce *CompileError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%.60s) = %v, want %q", c.expr, err, c.want)
		}
	}
}

func compileCommandJSON(cmd string) (*Program, error) {
	var c manifest.Command
	if err := json.Unmarshal([]byte(cmd), &c); err != nil {
		return nil, err
	}
	return CompileCommand(&c, nil)
}

func TestCompileCommand(t *testing.T) {
	// A flag has no schema; it binds a Bool.
	p, err := compileCommandJSON(`{"name":"f","type":"pure","args":[{"kind":"flag","long":"v","default":"false"},{"kind":"pos","schema":"j"}],
		"return":{"schema":"j"},"expr":` + lam(ifE("j", bound("b", "v"), bound("j", "n"), jl(0)), "v", "n") + `}`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Run(context.Background(), []json.RawMessage{json.RawMessage("true"), json.RawMessage("5")})
	if err != nil || string(out) != "5" {
		t.Fatalf("Run = %s, %v", out, err)
	}
}
