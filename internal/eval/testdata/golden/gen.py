#!/usr/bin/env python3
"""Writes the golden fixtures of docs/spec.md §7.6 (one JSON file per case).

Each expr is derived from morloc's rules (docs/spec.md §7.3, toNexusExpr): the
field names are exact, variable names are guesses (nexus treats them as
opaque). The sources and expected outputs are those of morloc's golden
tests (test-suite/golden-tests/<dir>/{main.loc,exp.txt}) at v0.98.2.
Run it from this directory: python3 gen.py
"""
import json

# ---- expression builders ----
def lit(schema, value):
    return {"tag": "lit", "schema": schema, "lit_type": schema, "value": str(value)}
def j(n): return lit("j", n)
def f8(x): return lit("f8", x)
def b(v): return lit("b", "1" if v else "0")
def unit(): return lit("z", "0")
def s(text): return {"tag": "str", "schema": "s", "value": text}
def cont(schema, *elems): return {"tag": "container", "schema": schema, "elements": list(elems)}
def var(schema, name): return {"tag": "bound", "schema": schema, "var": name}
def lam(vars, body): return {"tag": "lambda", "vars": vars, "body": body}
def let(schema, name, value, body):
    return {"tag": "app", "schema": schema, "func": lam([name], body), "args": [value]}
def app(schema, func, *args): return {"tag": "app", "schema": schema, "func": func, "args": list(args)}
def pat(schema, p): return {"tag": "pattern", "schema": schema, "pattern": p}
END = {"type": "end"}
def idx(*sels): return {"type": "idx", "selectors": [{"index": i, "sub": sub} for i, sub in sels]}
def key(*sels): return {"type": "key", "selectors": [{"key": k, "sub": sub} for k, sub in sels]}
def bidx(sub=None):
    p = {"type": "bracket_index"}
    if sub is not None:
        p["sub"] = sub
    return p
SLICE = {"type": "bracket_slice"}
def interp(strings, *args): return app("s", {"tag": "interpolation", "schema": "s", "strings": strings}, *args)
def if_(schema, c, t, e): return {"tag": "if", "schema": schema, "cond": c, "then": t, "else": e}
def throw(msg): return {"tag": "throw", "msg": s(msg)}
def catch(fallible, fallback): return {"tag": "catch", "fallible": fallible, "fallback": fallback}
def show(child): return {"tag": "show", "schema": "s", "child": child}
def read(schema, child): return {"tag": "read", "schema": schema, "child": child}
def hash_(child): return {"tag": "hash", "schema": "s", "child": child}
def save(fmt, value, path, level=None):
    return {"tag": "save", "format": fmt, "schema": value.get("schema", "z"),
            "level": level if level is not None else j(0), "value": value, "path": path}
def load(schema, path): return {"tag": "load", "schema": schema, "child": path}
def emap(schema, v, body, lst): return {"tag": "map", "schema": schema, "func": lam([v], body), "list": lst}
def none(): return None

def cmd(name, source, expr, ret, args=(), call=(), expect=None, **extra):
    c = {"name": name, "source": source, "args": [{"schema": a} for a in args],
         "return": ret, "expr": expr, "call": list(call)}
    if expect is not None:
        c["expect"] = expect
    c.update(extra)
    return c

cases = []
def case(n, test, scope, commands, note=None):
    c = {"case": n, "test": test, "scope": scope, "commands": commands}
    if note:
        c["note"] = note
    cases.append(c)

# 1
case(1, "nexus-let-pure", "in", [
    cmd("letSimpleInt", "letSimpleInt = let x = 42 in x",
        let("j", "x@0", j(42), var("j", "x@0")), "j", expect="42")])
# 2
case(2, "nexus-let-pure", "in", [
    cmd("letSimpleReal", "letSimpleReal = let r = 3.14 in r",
        let("f8", "r@0", f8("3.14"), var("f8", "r@0")), "f8", expect="3.14"),
    cmd("letSimpleTuple", 'letSimpleTuple = let p = (42, "world") in p',
        let("t2js", "p@0", cont("t2js", j(42), s("world")), var("t2js", "p@0")), "t2js",
        expect='[42,"world"]')])
# 3
case(3, "nexus-let-pure", "in", [
    cmd("letWithArg", "letWithArg x = let y = x in y",
        lam(["x@0"], let("j", "y@1", var("j", "x@0"), var("j", "y@1"))), "j",
        args=["j"], call=[42], expect="42")])
# 4: the same name at both levels, to exercise shadowing.
case(4, "nexus-let-pure", "in", [
    cmd("letShadow", "letShadow = let x = 1 in let x = 2 in x",
        let("j", "x", j(1), let("j", "x", j(2), var("j", "x"))), "j", expect="2"),
    cmd("letSelfRef", "letSelfRef = let x = 1 in let x = x in x",
        let("j", "x", j(1), let("j", "x", var("j", "x"), var("j", "x"))), "j", expect="1")],
    note="both lets use the one name x (morloc uniquifies them to x@0, x@1) so that the test exercises lexical shadowing")
# 5
PT = "m21xj1yj"
case(5, "nexus-let-pure", "in", [
    cmd("letRecord", "letRecord = let p = { x = 10, y = 20 } in p",
        let(PT, "p@0", cont(PT, j(10), j(20)), var(PT, "p@0")), PT, expect='{"x":10,"y":20}'),
    cmd("letRecordGetter", "letRecordGetter = let p = { x = 10, y = 20 } in .x p",
        let("j", "p@0", cont(PT, j(10), j(20)),
            app("j", pat("j", key(("x", END))), var(PT, "p@0"))), "j", expect="10")])
# 6: f 1 is beta-reduced to \y -> (1, y)
case(6, "nexus-let-lambda", "in", [
    cmd("letLambdaPartial", "letLambdaPartial = let f = (\\x -> \\y -> (x, y)) in f 1",
        lam(["y@0"], cont("t2jj", j(1), var("j", "y@0"))), "t2jj",
        args=["j"], call=[2], expect="[1,2]")])
# 7
X = var("s", "x@0")
FAR = cont("t2js", j(123), s("zanzibar"))
case(7, "native-morloc-9", "in", [
    cmd("foo", 'test1 x y = "#{x}+#{y}=#{x}#{y}"; far = (123, "zanzibar"); foo x = [ test1 x "pickle", "somewhere in #{.1 far}", "#{x}", "#{x}#{x}", "<#{x}>", "#{x}>", "<#{x}", "#{x}.#{x}" ]',
        lam(["x@0"], cont("as",
            interp(["", "+", "=", "", ""], X, s("pickle"), X, s("pickle")),
            interp(["somewhere in ", ""], app("s", pat("s", idx((1, END))), FAR)),
            interp(["", ""], X),
            interp(["", "", ""], X, X),
            interp(["<", ">"], X),
            interp(["", ">"], X),
            interp(["<", ""], X),
            interp(["", ".", ""], X, X))), "as",
        args=["s"], call=["xxy"],
        expect='["xxy+pickle=xxypickle","somewhere in zanzibar","xxy","xxyxxy","<xxy>","xxy>","<xxy","xxy.xxy"]')])
# 8
R8 = "m31xj1ys1zj"
case(8, "pattern-getters", "in", [
    cmd("pureChained", 'pureChained = .1.(.0,.2) (42, ("Jim", True, 69))',
        app("t2sj", pat("t2sj", idx((1, idx((0, END), (2, END))))),
            cont("t2jt3sbj", j(42), cont("t3sbj", s("Jim"), b(True), j(69)))), "t2sj",
        expect='["Jim",69]'),
    cmd("pureRecordHetGetter", 'pureRecordHetGetter = .(.x, .z) { x = 7, y = "hi", z = 8 }',
        app("t2jj", pat("t2jj", key(("x", END), ("z", END))),
            cont(R8, j(7), s("hi"), j(8))), "t2jj", expect="[7,8]")])
# 9
T1 = cont("t3jbf8", j(67), b(True), f8("3.14"))
T2S = "t2jt3bsf8"
T2 = cont(T2S, j(67), cont("t3bsf8", b(True), s("Nessie"), f8("6.7")))
THING = "m21aj1bt3bjs"
T3 = cont(THING, j(67), cont("t3bjs", b(True), j(42), s("Alice")))
T4S = "t2j" + THING
T4 = cont(T4S, j(42), cont(THING, j(67), cont("t3bjs", b(True), j(420), s("Bob"))))
T5S = "t3" + THING + "j" + THING
T5 = cont(T5S, cont(THING, j(67), cont("t3bjs", b(True), j(420), s("Alice"))), j(42),
          cont(THING, j(68), cont("t3bjs", b(False), j(421), s("Bob"))))
def get(schema, p, recv): return app(schema, pat(schema, p), recv)
FOO_S = "tf" + "j" + "b" + "f8" + "f8" + "t2js" + "t2bf8" + "t2f8b" + "t3jbf8" + "j" + "t2t3bjsj" + "t2jb" + "t3jbs" + "j" + "t2jb" + "t4jsjs"
case(9, "native-morloc-7", "in", [
    cmd("foo", "test1 = (67,True,3.14); test2 = (67, (True, \"Nessie\", 6.7)); test3..5 Things; foo = ( .0 test1, .1 test1, .2 test1, .1.2 test2, .(.0, .1.1) test2, .1.(.0, .2) test2, .1.(.2, .0) test2, .(.0, .1.(.0, .2)) test2, .a test3, .(.b, .a) test3, .(.a, .b.0) test3, .(.a, .b.(.0, .2)) test3, .1.b.1 test4, .1.b.(.1,.0) test4, .(.0.b.(.1,.2), .2.b.(.1,.2)) test5 )",
        cont(FOO_S,
            get("j", idx((0, END)), T1),
            get("b", idx((1, END)), T1),
            get("f8", idx((2, END)), T1),
            get("f8", idx((1, idx((2, END)))), T2),
            get("t2js", idx((0, END), (1, idx((1, END)))), T2),
            get("t2bf8", idx((1, idx((0, END), (2, END)))), T2),
            get("t2f8b", idx((1, idx((2, END), (0, END)))), T2),
            get("t3jbf8", idx((0, END), (1, idx((0, END), (2, END)))), T2),
            get("j", key(("a", END)), T3),
            get("t2t3bjsj", key(("b", END), ("a", END)), T3),
            get("t2jb", key(("a", END), ("b", idx((0, END)))), T3),
            get("t3jbs", key(("a", END), ("b", idx((0, END), (2, END)))), T3),
            get("j", idx((1, key(("b", idx((1, END)))))), T4),
            get("t2jb", idx((1, key(("b", idx((1, END), (0, END)))))), T4),
            get("t4jsjs", idx((0, key(("b", idx((1, END), (2, END))))), (2, key(("b", idx((1, END), (2, END)))))), T5)),
        FOO_S,
        expect='[67,true,3.14,6.7,[67,"Nessie"],[true,6.7],[6.7,true],[67,true,6.7],67,[[true,42,"Alice"],67],[67,true],[67,true,"Alice"],420,[420,true],[420,"Alice",421,"Bob"]]')])
# 10
R10a = "m31xs1yf81zj"
R10b = "m31xj1yt2sj1zf8"
case(10, "pattern-setters-pure", "in", [
    cmd("setReorderArgs", 'setReorderArgs = .(.z = 99, .x = "first") { x = "old", y = 1.5, z = 0 }',
        app(R10a, pat(R10a, key(("z", END), ("x", END))),
            cont(R10a, s("old"), f8("1.5"), j(0)), j(99), s("first")), R10a,
        expect='{"x":"first","y":1.5,"z":99}'),
    cmd("setMixedNested", 'setMixedNested = .(.x = 42, .y.0 = "rewritten") { x = 0, y = ("orig", 1), z = 3.14 }',
        app(R10b, pat(R10b, key(("x", END), ("y", idx((0, END))))),
            cont(R10b, j(0), cont("t2sj", s("orig"), j(1)), f8("3.14")), j(42), s("rewritten")), R10b,
        expect='{"x":42,"y":["rewritten",1],"z":3.14}')])
# 11
RES = "m24names7addressm24citys3zips"
OUT = "m26ofirstj6middlem26mfirstj5innerm26ifirstj4ivalj"
case(11, "record-nested-getter-chain", "in", [
    cmd("combo", "combo r o = (.address.city r, .address.zip r, .middle.inner.ival o)",
        lam(["r@0", "o@1"], cont("t3ssj",
            get("s", key(("address", key(("city", END)))), var(RES, "r@0")),
            get("s", key(("address", key(("zip", END)))), var(RES, "r@0")),
            get("j", key(("middle", key(("inner", key(("ival", END)))))), var(OUT, "o@1")))),
        "t3ssj", args=[RES, OUT],
        call=[{"name": "c", "address": {"city": "NYC", "zip": "10001"}},
              {"ofirst": 0, "middle": {"mfirst": 0, "inner": {"ifirst": 0, "ival": 42}}}],
        expect='["NYC","10001",42]')])
# 12
INNER = "m31pj1qj1rj"
OUTER = "m35labels5inner" + INNER + "5countj"
case(12, "record-literal-ordering", "in", [
    cmd("nested", 'nested = { count = 7, inner = { r = 30, p = 10, q = 20 }, label = "outer" }',
        cont(OUTER, s("outer"), cont(INNER, j(10), j(20), j(30)), j(7)), OUTER,
        expect='{"label":"outer","inner":{"p":10,"q":20,"r":30},"count":7}')])
# 13
ints = [-42, 42, 42, 42, 493, 493, 1, 1, -42, -42, -493, -493, -1, -1]
big = [3735928559, 4294967295, 9223372036854775807, -9223372036854775808]
huge = [18446744073709551616, -9223372036854775809, 100000000000000000000000000000, -100000000000000000000000000000]
TS = "t4ajajajaf8"
case(13, "numeric-literals", "in", [
    cmd("test", "test = (testInts, testBigInts, testHugeInts, testFloats); hex, octal and binary literals arrive as decimal",
        cont(TS, cont("aj", *[j(n) for n in ints]), cont("aj", *[j(n) for n in big]),
             cont("aj", *[j(n) for n in huge]), cont("af8", f8("4.2"), f8("420000.0"), f8("4.2e-2"))), TS,
        expect="[[-42,42,42,42,493,493,1,1,-42,-42,-493,-493,-1,-1],[3735928559,4294967295,9223372036854775807,-9223372036854775808],[18446744073709551616,-9223372036854775809,100000000000000000000000000000,-100000000000000000000000000000],[4.2,420000,0.042]]")])
# 14
case(14, "int-literal-promoted-to-real", "in", [
    cmd("ys", "ys = [-1.5, -2.0e-3, -0xff]", cont("af8", f8("-1.5"), f8("-2.0e-3"), f8("-255.0")), "af8",
        expect="[-1.5,-0.002,-255]"),
    cmd("f32Ok", "f32Ok :: F32; f32Ok = 1000000", lit("f4", "1000000.0"), "f4", expect="1000000")])
# 15
case(15, "conditional-value-codegen", "in", [
    cmd("purePick", "purePick c a b = ? c = a : b",
        lam(["c@0", "a@1", "b@2"], if_("j", var("b", "c@0"), var("j", "a@1"), var("j", "b@2"))), "j",
        args=["b", "j", "j"], call=[False, 1, 2], expect="2"),
    cmd("pureLit", "pureLit c = ? c = 111 : 222",
        lam(["c@0"], if_("j", var("b", "c@0"), j(111), j(222))), "j",
        args=["b"], call=[True], expect="111")])
# 16
case(16, "conditional-value-codegen", "in", [
    cmd("pureThrow", 'pureThrow c = ? c = 42 : @throw "nope"',
        lam(["c@0"], if_("j", var("b", "c@0"), j(42), throw("nope"))), "j",
        args=["b"], call=[False], expect_error="nope", error_kind="thrown"),
    cmd("strArm", 'strArm c = ? c = @throw "no" : "hello"',
        lam(["c@0"], if_("s", var("b", "c@0"), throw("no"), s("hello"))), "s",
        args=["b"], call=[False], expect='"hello"')])
# 17
case(17, "intrinsic-throw-pure", "in", [
    cmd("throwInt", 'throwInt _ = @throw "PURE: boom int"',
        lam(["_@0"], throw("PURE: boom int")), "j", args=["j"], call=[42],
        expect_error="PURE: boom int", error_kind="thrown"),
    cmd("caughtInt", "caughtInt x = @catch (throwInt x) x",
        lam(["x@0"], catch(throw("PURE: boom int"), var("j", "x@0"))), "j",
        args=["j"], call=[7], expect="7")])
# 18 (the expr is the one morloc wrote, docs/spec.md §7.7)
case(18, "rust-error", "in", [
    cmd("catchBare", 'catchBare = @catch (@throw "boom") 42',
        {"tag": "catch", "fallible": {"tag": "throw", "msg": {"tag": "str", "schema": "s", "value": "boom"}},
         "fallback": {"tag": "lit", "schema": "j", "lit_type": "j", "value": "42"}}, "j", expect="42")],
    note="expr observed in a real manifest")
# 19
case(19, "intrinsic-show-read-nexus", "in", [
    cmd("showRecord", "showRecord = @show {x = 1, y = 2}", show(cont(PT, j(1), j(2))), "s",
        expect='"{\\"x\\":1,\\"y\\":2}"'),
    cmd("showShowInt", "showShowInt = @show (@show 42)", show(show(j(42))), "s",
        expect='"\\"42\\""')])
# 20
case(20, "intrinsic-show-read-nexus", "in", [
    cmd("readTuple", 'readTuple = @catch (@read "[10,\\"abc\\"]") (0, "err")',
        catch(read("t2js", s('[10,"abc"]')), cont("t2js", j(0), s("err"))), "t2js",
        expect='[10,"abc"]'),
    cmd("readTypeMismatch", 'readTypeMismatch = @catch (@read "\\"hello\\"") -1',
        catch(read("j", s('"hello"')), j(-1)), "j", expect="-1"),
    cmd("readEmptyStr", 'readEmptyStr = @catch (@read "") -1',
        catch(read("j", s("")), j(-1)), "j", expect="-1")])
# 21
TEN = cont("aj", *[j(i) for i in range(10)])
PTS = cont("a" + PT, *[cont(PT, j(10 * k), j(100 * k)) for k in range(1, 6)])
case(21, "bracket-accessors-pure", "in", [
    cmd("sliceStepClosed", "sliceStepClosed = .[1:7:2] ten",
        app("aj", pat("aj", SLICE), j(1), j(7), j(2), TEN), "aj", expect="[1,3,5]"),
    cmd("sliceEmpty", "sliceEmpty = .[5:1] ten",
        app("aj", pat("aj", SLICE), j(5), j(1), cont("?j"), TEN), "aj", expect="[]"),
    cmd("chainSliceFieldTuple", "chainSliceFieldTuple = .[1:3].(.x, .y) pts",
        emap("at2jj", "e@0", get("t2jj", key(("x", END), ("y", END)), var(PT, "e@0")),
             app("a" + PT, pat("a" + PT, SLICE), j(1), j(3), cont("?j"), PTS)), "at2jj",
        expect="[[20,200],[30,300]]")],
    note="an absent slice bound is an empty optional container (docs/spec.md §7.3.3)")
# 22
PAIRS = cont("at2jj", cont("t2jj", j(1), j(2)), cont("t2jj", j(3), j(4)), cont("t2jj", j(5), j(6)))
case(22, "intrmap-tuple-broadcast", "in", [
    cmd("sliceIdx1", "sliceIdx1 = .[0:2].1 [(1, 2), (3, 4), (5, 6)]",
        emap("aj", "e@0", get("j", idx((1, END)), var("t2jj", "e@0")),
             app("at2jj", pat("at2jj", SLICE), j(0), j(2), cont("?j"), PAIRS)), "aj",
        expect="[2,4]")])
# 23
case(23, "nexus-toplevel-null", "in", [
    cmd("unitTop", "unitTop = ()", unit(), "z", expect="null",
        note="Run returns null; the CLI prints nothing unless --keep-null"),
    cmd("optNone", "optNone :: ?Int; optNone = Null", cont("?j"), "?j", expect="null",
        note="Run returns null; the CLI prints nothing unless --keep-null"),
    cmd("optSome", "optSome :: ?Int; optSome = 7", cont("?j", j(7)), "?j", expect="7"),
    cmd("pair", "pair = (5, ())", cont("t2jz", j(5), unit()), "t2jz", expect="[5,null]")])
# 24
P = var("s", "path@1")
def roundtrip(name, src, fmt, schema, value, expect):
    body = let(schema, "_do_0@2", save(fmt, var(schema, "x@0"), P), load(schema, P))
    return cmd(name, src, lam(["x@0", "path@1"], body), schema, args=[schema, "s"],
               call=[value, "<tmpdir>/load-nexus-only-%s.dat" % name], expect=expect)
case(24, "intrinsic-load-nexus-only", "in", [
    roundtrip("jsonTup", "jsonTup t path = do { @savej path t; @load path }", "json", "t2js", [3, "gamma"], '[3,"gamma"]'),
    cmd("loadMissing", "loadMissing path = @catch (@load path :: <IO, Err> Int) (-1)",
        lam(["path@0"], catch(load("j", var("s", "path@0")), j(-1))), "j", args=["s"],
        call=["<tmpdir>/load-nexus-only-does-not-exist.dat"], expect="-1"),
    # The rest of the golden test: JSON and msgpack round trips are in
    # scope; morloc's binary voidstar format (@save) is refused.
    roundtrip("jsonInt", "jsonInt x path = do { @savej path x; @load path }", "json", "j", 44, "44"),
    roundtrip("jsonReal", "jsonReal x path = do { @savej path x; @load path }", "json", "f8", 1.41, "1.41"),
    roundtrip("jsonStr", "jsonStr s path = do { @savej path s; @load path }", "json", "s", "morloc", '"morloc"'),
    roundtrip("jsonList", "jsonList xs path = do { @savej path xs; @load path }", "json", "as", ["g", "h", "i"], '["g","h","i"]'),
    roundtrip("jsonFixedTupList", "jsonFixedTupList xs path", "json", "at2jf8", [[5, 5.5], [6, 6.5]], "[[5,5.5],[6,6.5]]"),
    roundtrip("msgInt", "msgInt x path = do { @savem path x; @load path }", "msgpack", "j", 43, "43"),
    roundtrip("msgReal", "msgReal x path", "msgpack", "f8", 2.71, "2.71"),
    roundtrip("msgStr", "msgStr s path", "msgpack", "s", "world", '"world"'),
    roundtrip("msgList", "msgList xs path", "msgpack", "as", ["d", "e", "f"], '["d","e","f"]'),
    roundtrip("msgTup", "msgTup t path", "msgpack", "t2js", [2, "beta"], '[2,"beta"]'),
    roundtrip("msgFixedTupList", "msgFixedTupList xs path", "msgpack", "at2jf8", [[3, 3.5], [4, 4.5]], "[[3,3.5],[4,4.5]]"),
    dict(roundtrip("binInt", "binInt x path = do { @save 0 x path; @load path }", "voidstar", "j", 42, None),
         expect_error="voidstar", error_kind="unsupported", refusal="@save (morloc's voidstar format)"),
    dict(roundtrip("binTup", "binTup t path = do { @save 0 t path; @load path }", "voidstar", "t2js", [1, "alpha"], None),
         expect_error="voidstar", error_kind="unsupported", refusal="@save (morloc's voidstar format)"),
], note="the first two commands are @savej/@load and @load of a missing file; the rest of the golden test follows: msgpack in scope, morloc's binary voidstar refused")
# 25
Y = "t6ssssss"
case(25, "intrinsic-agnostic", "in", [
    cmd("test", 'test = do { let y = (@hash "hello", @hash 42, @hash (1, 2, 3), @lang, @typeof "hello", @schema "hello"); @savej "obs-saved.txt" y; y }',
        let(Y, "y@0", cont(Y, hash_(s("hello")), hash_(j(42)), hash_(cont("t3jjj", j(1), j(2), j(3))),
                            s("morloc"), s("Str"), s("s")),
            let(Y, "_do_1@1", save("json", var(Y, "y@0"), s("obs-saved.txt")), var(Y, "y@0"))), Y,
        expect='["447c3bd1a33eb4df","a311d4bf7eb5bec4","48fe6b3478393bbf","morloc","Str","s"]',
        files={"obs-saved.txt": '["447c3bd1a33eb4df","a311d4bf7eb5bec4","48fe6b3478393bbf","morloc","Str","s"]'})],
    note="@lang, @typeof and @schema are compile-time str nodes (docs/spec.md §7.3.2)")

for c in cases:
    with open("case%02d.json" % c["case"], "w") as f:
        json.dump(c, f, indent=1, ensure_ascii=False)
        f.write("\n")
print("wrote", len(cases), "cases")
