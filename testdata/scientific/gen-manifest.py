#!/usr/bin/env python3
"""Writes manifest.json of the scientific program: the same
functions in Python (numpy), R and C++, as <fn>_py, <fn>_r, <fn>_cpp, plus
a few one language has alone. Run it after changing FUNCTIONS."""
import json
import os

# Every pool is written against nexus's runtime, which the manifest must
# say (without "runtime": "nexus" a pool is one morloc compiled).
POOLS = [
    {"lang": "py", "exec": ["/usr/bin/python3", "pools/py/pool.py"], "metadata": {"runtime": "nexus"}},
    {"lang": "r", "exec": ["Rscript", "pools/r/pool.R"], "metadata": {"runtime": "nexus", "workers": 1}},
    {"lang": "cpp", "exec": ["pools/cpp/pool-cpp.out"], "metadata": {"runtime": "nexus"}},
    # Arguments as numpy arrays (the opt-in).
    {"lang": "py", "exec": ["/usr/bin/python3", "pools/py/pool.py"], "metadata": {"runtime": "nexus", "arrays": "numpy"}},
]
BASE = {"py": 1000, "r": 2000, "cpp": 3000}

# name, args [(schema, type)], return (schema, type), languages, description
FUNCTIONS = [
    ("doubled", [("af8", "[Real]")], ("af8", "[Real]"), "py r cpp", "Each number twice over"),
    ("count", [("af8", "[Real]")], ("j", "Int"), "py r cpp", "How many numbers there are"),
    ("eye", [("j", "Int")], ("aaf8", "[[Real]]"), "py r cpp", "The identity matrix of n rows"),
    ("one", [], ("af8", "[Real]"), "py r cpp", "The list [1.5]"),
    ("notANumber", [], ("f8", "Real"), "py r cpp", "NaN"),
    ("specials", [], ("af8", "[Real]"), "py r cpp", "1, infinity, minus infinity and NaN"),
    ("inRecord", [], ("m21xf81yf8", "Point"), "py r cpp", "A point at (NaN, -infinity)"),
    ("idReal", [("f8", "Real")], ("f8", "Real"), "py r cpp", "The number unchanged"),
    ("ramp", [("j", "Int")], ("af8", "[Real]"), "py r cpp", "0, 0.5, 1, ... (n numbers), with NaN at 3 and infinity at 5"),
    ("pair", [], ("t2sj", "(Str, Int)"), "py r cpp", "The pair (\"a\", 1)"),
    ("point", [], ("m21xf81yf8", "Point"), "py r cpp", "The point (1.5, -2)"),
    ("tags", [], ("as", "[Str]"), "py r cpp", "The one tag \"solo\""),
    ("noInts", [], ("aj", "[Int]"), "py r cpp", "No integers"),
    ("noStrs", [], ("as", "[Str]"), "py r cpp", "No strings"),
    ("grid", [], ("aaj", "[[Int]]"), "py r cpp", "The matrix [[1,3,5],[2,4,6]]"),
    ("rows", [], ("am24names5score?f8", "[Row]"), "py r cpp", "Two rows, the second without a score"),
    ("levels", [], ("as", "[Str]"), "py r cpp", "The labels lo, hi, lo"),
    ("missing", [], ("?j", "?Int"), "py r cpp", "Nothing"),
    ("tally", [], ("<dict>at2sj", "Map Str Int"), "py r cpp", "The count a: 2"),
    ("uniq", [], ("aj", "[Int]"), "py r cpp", "The distinct numbers of 3, 1, 3, 2, sorted"),
    ("triple", [], ("a:3j", "Vector 3 Int"), "py r cpp", "The numbers 7, 8, 9"),
    # One language alone.
    ("floatsAsInts", [], ("aj", "[Int]"), "py", "A float array where [Int] is declared: an error"),
    ("scalarFromList", [], ("f8", "Real"), "r", "A list where Real is declared: an error"),
    ("oneRowFrame", [], ("m21xf81yf8", "Point"), "r", "A one-row data frame as a record"),
    ("named", [], ("m21xf81yf8", "Point"), "py", "A namedtuple as a record"),
    ("squares", [], ("aj", "[Int]"), "py", "A generator of 0, 1, 4"),
    ("argKinds", [("af8", "[Real]"), ("aaj", "[[Int]]"), ("s", "Str")], ("as", "[Str]"), "npy", "What each argument arrived as"),
    ("total", [("af8", "[Real]")], ("f8", "Real"), "npy", "The sum, by numpy"),
    ("series", [], ("af8", "[Real]"), "py", "A pandas Series of 1.5, 2.5 and NaN"),
    ("frame", [], ("am21xf81yf8", "[Point]"), "py", "A pandas DataFrame of two points, as records"),
    # NaN in records, lists of records and record arguments.
    ("inRecords", [], ("am21xf81yf8", "[Point]"), "py r cpp", "The points (NaN, 1.5) and (infinity, -infinity)"),
    ("inCloud", [], ("m26pointsam21xf81yf85scale?f8", "Cloud"), "py r cpp", "A cloud of the points (NaN, 0.5) and (1, infinity), scale NaN"),
    ("swap", [("m21xf81yf8", "Point")], ("m21xf81yf8", "Point"), "py r cpp", "The point with x and y swapped"),
]


def arg(schema, typ, i):
    return {"kind": "pos", "schema": schema, "type": typ, "name": None, "metavar": None, "quoted": False, "many": False,
            "stdin": False, "desc": ["Argument %d" % i], "constraints": [], "metadata": {}, "source": "inline",
            "form": "auto", "checks": []}


def main():
    pools, commands = [], []
    for i, p in enumerate(POOLS):
        pools.append({"lang": p["lang"], "exec": p["exec"], "socket": "pipe-%d" % i,
                      "pool_hash": "5c1e5c1e0000000%d" % i, "allow_string_null": False, "metadata": p["metadata"]})
    pool_of = {"py": 0, "r": 1, "cpp": 2, "npy": 3}
    mids = {"py": 1000, "r": 2000, "cpp": 3000, "npy": 4000}
    for k, (name, args, ret, langs, desc) in enumerate(FUNCTIONS):
        for lang in langs.split():
            pool = pool_of[lang]
            commands.append({
                "name": "%s_%s" % (name, lang), "type": "remote", "mid": mids[lang] + k + 1, "pool": pool,
                "needed_pools": [pool], "desc": ["%s (%s)" % (desc, lang)],
                "args": [arg(s, t, i + 1) for i, (s, t) in enumerate(args)],
                "return": {"schema": ret[0], "type": ret[1], "desc": [desc], "constraints": [], "metadata": {}},
                "constraints": [], "internal": False, "terminals": [], "metadata": {}, "group": lang})
    manifest = {"name": "scientific", "build": {"path": ".", "time": 1755350000, "morloc_version": "0.98.2", "build_params": ""},
                "pools": pools, "commands": commands,
                "groups": [{"name": g, "desc": ["The functions in %s" % w], "metadata": {}} for g, w in
                           (("py", "Python with numpy"), ("r", "R"), ("cpp", "C++"), ("npy", "Python, taking numpy arrays"))], "desc": ["Scientific values in every runtime"],
                "epilogues": [], "metadata": {}}
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    # The mids each pool file registers.
    for lang in ("py", "r", "cpp", "npy"):
        print(lang, ", ".join("%s=%d" % (name, mids[lang] + k + 1) for k, (name, _, _, langs, _) in enumerate(FUNCTIONS) if lang in langs.split()))


main()
