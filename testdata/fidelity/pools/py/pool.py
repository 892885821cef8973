"""Python pool of the `fidelity` program: the functions that pools/r/pool.R
and pools/cpp/pool.cpp implement too, so that e2e/fidelity_test.go can check
that the three languages give the same answers (mids 301..328).

Each function gets the plain JSON value of its argument: ints of any size,
floats, str, bool, lists, dicts (records and Map Str Int), None.
"""

import os
import sys

import nexus


def id_int(x):
    return x


def neg_int(x):
    return -x


def id_real(x):
    return x


def half_real(x):
    return x / 2


def id_str(s):
    return s


def str_len(s):
    return len(s)  # code points


def exclaim(s):
    return s + "!"


def id_bool(b):
    return b


def not_bool(b):
    return not b


def id_ints(xs):
    return xs


def sum_ints(xs):
    return sum(xs)  # exact: Python ints do not overflow


def id_reals(xs):
    return xs


def sum_reals(xs):
    # A loop, not sum(): since Python 3.12 sum() of floats compensates for
    # rounding, and the other languages add plainly from left to right.
    total = 0.0
    for x in xs:
        total += x
    return total


def swap_pair(pair):
    return [pair[1], pair[0]]


def id_tuple(t):
    return t


def id_person(p):
    return p


def birthday(p):
    return {"name": p["name"], "age": p["age"] + 1}


def id_maybe(x):
    return x


def maybe_inc(x):
    return None if x is None else x + 1


def id_map(m):
    return m


def map_total(m):
    return sum(m.values())


def map_inc(m):
    return {k: v + 1 for k, v in m.items()}


def id_team(team):
    return team


def team_ages(team):
    return [member["age"] for member in team["members"]]


def fail(text):
    raise ValueError("boom: " + text)


def chatty():
    # Both writes must reach nexus's stderr, never the MCP stream.
    print("from-py-print")
    sys.stdout.flush()
    os.system("echo from-py-child")
    return "done"


# Wrong on purpose: nexus checks every result against its declared type.
def claims_int():
    return "seven"  # declared Int


def claims_record():
    return {"name": "Ada"}  # declared Person: no age


if __name__ == "__main__":
    nexus.serve({
        301: id_int, 302: neg_int, 303: id_real, 304: half_real,
        305: id_str, 306: str_len, 307: exclaim, 308: id_bool, 309: not_bool,
        310: id_ints, 311: sum_ints, 312: id_reals, 313: sum_reals,
        314: swap_pair, 315: id_tuple, 316: id_person, 317: birthday,
        318: id_maybe, 319: maybe_inc, 320: id_map, 321: map_total, 322: map_inc,
        323: id_team, 324: team_ages, 325: fail, 326: chatty,
        327: claims_int, 328: claims_record,
    })
