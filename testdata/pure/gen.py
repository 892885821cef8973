#!/usr/bin/env python3
"""Writes testdata/pure/manifest.json from the golden fixtures (docs/spec.md §7.6).

The fixtures (internal/eval/testdata/golden/caseNN.json) hold every command
of the 25 golden cases: its morloc source, its `expr` tree, its argument and
return schemas, a call and morloc's expected answer. This script turns each
command into a pure command of one program, in morloc's manifest format
(docs/spec.md §2, §7.1): `type: "pure"`, an `expr`, no `mid`, `pool` or
`needed_pools`, and no pools at all. The `expr` and the schemas are copied
unchanged; e2e/pure_test.go checks that they still equal the fixtures'.

A name two cases share (`foo` in cases 7 and 9, `test` in 13 and 25) gets
its case number: `foo7`, `foo9`, `test13`, `test25`.

Run it from anywhere, with the standard library only:
    python3 testdata/pure/gen.py
"""
import glob
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "internal", "eval", "testdata", "golden")

# The records the commands take or return (and those inside them), by
# schema, with a name each: the golden tests' own type names are not in the
# fixtures. A record missing here stops the script.
RECORDS = {
    "m21xj1yj": "Point",                                  # case 5
    "m31xs1yf81zj": "Triple",                             # case 10
    "m31xj1yt2sj1zf8": "Mixed",                           # case 10
    "m24names7addressm24citys3zips": "Resident",          # case 11
    "m24citys3zips": "Address",
    "m26ofirstj6middlem26mfirstj5innerm26ifirstj4ivalj": "Outer",  # case 11
    "m26mfirstj5innerm26ifirstj4ivalj": "Middle",
    "m26ifirstj4ivalj": "Inner",
    "m35labels5innerm31pj1qj1rj5countj": "Nested",        # case 12
    "m31pj1qj1rj": "PQR",
}

SCALARS = {"z": "()", "b": "Bool", "s": "Str", "j": "Int", "f8": "Real", "f4": "F32",
           "i1": "I8", "i2": "I16", "i4": "I32", "i8": "I64",
           "u1": "U8", "u2": "U16", "u4": "U32", "u8": "U64"}


def base62(c):
    if c.isdigit():
        return ord(c) - ord("0")
    if c.islower():
        return ord(c) - ord("a") + 10
    return ord(c) - ord("A") + 36


def parse(s, i=0):
    """Returns (morloc type name, end) of the schema starting at s[i]."""
    c = s[i]
    if len(s[i:i + 2]) == 2 and s[i:i + 2] in SCALARS:
        return SCALARS[s[i:i + 2]], i + 2
    if c in SCALARS:
        return SCALARS[c], i + 1
    if c == "a":
        t, end = parse(s, i + 1)
        return "[" + t + "]", end
    if c == "?":
        t, end = parse(s, i + 1)
        return "?" + t, end
    if c == "t":
        n, k, items = base62(s[i + 1]), i + 2, []
        for _ in range(n):
            t, k = parse(s, k)
            items.append(t)
        return "(" + ", ".join(items) + ")", k
    if c == "m":
        n, k = base62(s[i + 1]), i + 2
        for _ in range(n):
            k += 1 + base62(s[k])
            _, k = parse(s, k)
        code = s[i:k]
        if code not in RECORDS:
            raise SystemExit("gen.py: name the record %s in RECORDS" % code)
        return RECORDS[code], k
    raise SystemExit("gen.py: schema %r: unexpected %r" % (s, c))


def type_name(schema):
    t, end = parse(schema)
    if end != len(schema):
        raise SystemExit("gen.py: schema %r has trailing text" % schema)
    return t


def arg_names(expr, n):
    """The variables a top-level lambda binds, without morloc's @N suffix."""
    if expr.get("tag") == "lambda" and len(expr["vars"]) == n:
        return [v.split("@")[0] for v in expr["vars"]]
    return ["argument %d" % (k + 1) for k in range(n)]


def pos_arg(schema, var):
    desc = {"path": "Path of the file to write and read"}.get(var, "Argument " + var)
    return {"kind": "pos", "schema": schema, "type": type_name(schema), "name": None,
            "metavar": None, "quoted": schema == "s", "many": False, "stdin": False,
            "desc": [desc], "constraints": [], "metadata": {}, "source": "inline",
            "form": "auto", "checks": []}


def main():
    cases = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "case*.json"))):
        with open(path, encoding="utf-8") as f:
            cases.append(json.load(f))
    count = {}
    for case in cases:
        for c in case["commands"]:
            count[c["name"]] = count.get(c["name"], 0) + 1
    commands = []
    for case in cases:
        for c in case["commands"]:
            name = c["name"] if count[c["name"]] == 1 else "%s%d" % (c["name"], case["case"])
            ret = c["return"]
            record = ret[0] == "m"
            names = arg_names(c["expr"], len(c["args"]))
            commands.append({
                "name": name,
                "type": "pure",
                "desc": [c["source"], "Golden case %d (morloc golden test %s)" % (case["case"], case["test"])],
                "args": [pos_arg(a["schema"], v) for a, v in zip(c["args"], names)],
                "return": {"schema": ret, "type": type_name(ret), "desc": [],
                           "constraints": [{"type": "kind", "value": "record"}] if record else [],
                           "metadata": {}},
                "expr": c["expr"],
                "constraints": [],
                "internal": False,
                "terminals": [],
                "metadata": {},
                "group": None,
            })
    manifest = {
        "name": "pure",
        "build": {"path": ".", "time": 1755350000, "morloc_version": "0.98.2", "build_params": ""},
        "pools": [],
        "commands": commands,
        "groups": [],
        "desc": ["Every command of the golden cases of pure commands, as pure commands that nexus",
                 "evaluates itself (written by gen.py from internal/eval/testdata/golden)."],
        "epilogues": [],
        "unsafe_skip_null_check": False,
        "inline_size": None,
        "no_shm": False,
        "tmpdir": None,
        "run_log": None,
        "capabilities": ["log"],
        "metadata": {},
    }
    with open(os.path.join(HERE, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("wrote %d commands from %d cases" % (len(commands), len(cases)))


if __name__ == "__main__":
    main()
