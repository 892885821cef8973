#!/usr/bin/env python3
"""Writes the launchers morloc 0.75.0 and 0.96.0 would write for the program
of v0.69-py/, from the launcher morloc 0.69.0 wrote for it (v0.69-py/nexus).

Neither compiler can be built here, so the manifest is translated field by
field after library/Morloc/CodeGenerator/Nexus.hs at each tag of
github.com/morloc-project/morloc (buildManifest, argToJson, returnJson,
makeWrapperScript), and library/Morloc/CodeGenerator/Serial.hs
(serialAstToMsgpackSchema: Int is i4 up to 0.83, j from 0.84). See README.md.
Run it from this directory after recompiling v0.69-py."""
import json
import re

SRC = "v0.69-py/nexus"
BUILD = "/home/user/wordy"  # where the program was built (made up)


def payload(path):
    text = open(path).read()
    return json.loads(text.split("### MANIFEST ###\n", 1)[1])


def schema(s, version):
    # 0.84 on: morloc's Int is the unbounded j; before, a 32-bit i4.
    return re.sub(r"i4", "j", s) if version >= (0, 84) else s


def constraints(type_name, is_record):
    return [{"type": "kind", "value": "record"}] if is_record else []


def arg_075(a, s, records):
    kind = a["kind"]
    if kind == "flag":
        return {"kind": "flag", "short": a["short"], "long": a["long"], "long_rev": a["long_rev"],
                "default": a["default"], "desc": a["desc"], "metadata": {}}
    if kind == "grp":
        out = {"kind": "grp"}
        if s is not None:
            out["schema"] = s
        out.update({"type": a["metavar"], "metavar": a["metavar"], "desc": a["desc"],
                    "group_opt": a["group_opt"],
                    "entries": [{"key": e["key"], "arg": arg_075(e["arg"], None, records)} for e in a["entries"]],
                    "constraints": constraints(a["metavar"], True), "metadata": {}})
        return out
    out = {"kind": kind}
    if s is not None:
        out["schema"] = s
    out.update({"type": a["type_desc"], "metavar": a["metavar"], "quoted": a["quoted"]})
    if kind == "opt":
        out.update({"short": a["short"], "long": a["long"], "default": a["default"]})
    out.update({"desc": a["desc"], "constraints": constraints(a["type_desc"], a["type_desc"] in records),
                "metadata": {}})
    return out


def arg_096(a, s, records):
    """0.96 adds many, stdin (pos) and the CLI-shape fields to pos and opt."""
    kind = a["kind"]
    if kind in ("flag",):
        return arg_075(a, s, records)
    if kind == "grp":
        out = arg_075(a, s, records)
        out["entries"] = [{"key": e["key"], "arg": arg_096(e["arg"], None, records)} for e in a["entries"]]
        return out
    out = {"kind": kind}
    if s is not None:
        out["schema"] = s
    out.update({"type": a["type_desc"], "metavar": a["metavar"], "quoted": a["quoted"], "many": False})
    if kind == "pos":
        out["stdin"] = False
    else:
        out.update({"short": a["short"], "long": a["long"], "default": a["default"]})
    scalar = s is None or re.fullmatch(r"(<[^>]*>)*[bsjif][1248]?", s) is not None
    out.update({"desc": a["desc"], "constraints": constraints(a["type_desc"], a["type_desc"] in records),
                "metadata": {}, "source": "inline" if scalar else "auto", "form": "auto", "checks": [],
                "list_source": "inline", "list_form": "auto", "list_checks": [], "format": None})
    return out


def translate(v1, version):
    records = {"Stats", "Config"}
    vs = "%d.%d.0" % version
    pools = []
    for p in v1["pools"]:
        exe = p["exec"]
        if version >= (0, 78):  # pool paths absolute from 0.78
            exe = exe[:-1] + [BUILD + "/" + exe[-1]]
        pool = {"lang": p["lang"], "exec": exe, "socket": p["socket"]}
        if version >= (0, 89):
            pool["pool_hash"] = "9e1c0de5a1b2c3d4"
            pool["allow_string_null"] = True
        pool["metadata"] = {}
        pools.append(pool)
    arg = arg_096 if version >= (0, 90) else arg_075
    commands = []
    for c in v1["commands"]:
        cmd = {"name": c["name"], "type": c["type"]}
        if c["type"] == "remote":
            cmd.update({"mid": c["mid"], "pool": c["pool"], "needed_pools": c["needed_pools"]})
        schemas = [schema(s, version) for s in c["arg_schemas"]]
        cmd["desc"] = c["desc"]
        cmd["args"] = [arg(a, s if a["kind"] != "flag" else None, records) for a, s in zip(c["args"], schemas)]
        ret = schema(c["return_schema"], version)
        cmd["return"] = {"schema": ret, "type": c["return_type"], "desc": c["return_desc"],
                         "constraints": constraints(c["return_type"], c["return_type"] in records), "metadata": {}}
        if c["type"] == "pure":
            cmd["expr"] = c["expr"]
        cmd["constraints"] = []
        if version >= (0, 93):
            cmd["internal"] = False
            cmd["terminals"] = []
        cmd["metadata"] = {}
        cmd["group"] = c["group"]
        commands.append(cmd)
    m = {"name": v1["name"], "build": {"path": BUILD, "time": v1["build_time"], "morloc_version": vs},
         "pools": pools, "commands": commands,
         "groups": [{"name": g["name"], "desc": g["desc"], "metadata": {}} for g in v1["groups"]]}
    if version >= (0, 76):
        m.update({"desc": ["Text and number helpers, in Python (a nexus fixture for morloc 0.69)"], "epilogues": []})
    if version >= (0, 85):
        m["unsafe_skip_null_check"] = False
    if version >= (0, 87):
        m.update({"inline_size": 65536, "no_shm": False, "tmpdir": None})
    if version >= (0, 89):
        m.update({"run_log": None, "capabilities": []})
    m["metadata"] = {}
    return m


def launcher(m, version):
    if version >= (0, 89):
        head = "#!/bin/sh\n# morloc-program v%d.%d.0\nexec morloc-nexus run \"$0\" \"$@\"\n### MANIFEST ###\n" % version
    else:
        head = "#!/bin/sh\nexec morloc-nexus \"$0\" \"$@\"\n### MANIFEST ###\n"
    return head + json.dumps(m, separators=(",", ":"))


def main():
    v1 = payload(SRC)
    for version, out in (((0, 75), "written-v0.75-py/nexus"), ((0, 96), "written-v0.96-py/nexus")):
        with open(out, "w") as f:
            f.write(launcher(translate(v1, version), version))


main()
