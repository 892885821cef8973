"""Python pool of the scientific program: functions that return
what scientific Python code returns (numpy arrays and scalars, NaN,
dataclasses, namedtuples, sets, generators), registered twice over: mids
10xx for the pool that gets plain lists, 40xx for the one whose manifest
says "arrays": "numpy". Run with /usr/bin/python3, whose numpy is Debian's
python3-numpy."""

import collections
import dataclasses

import numpy as np

import nexus


@dataclasses.dataclass
class Point:
    x: float
    y: float


Row = collections.namedtuple("Row", "name score")
XY = collections.namedtuple("XY", "x y")


def doubled(xs):
    return np.array(xs) * 2


def count(xs):
    return np.int64(len(xs))


def eye(n):
    return np.eye(n)


def one():
    return np.array([1.5])


def not_a_number():
    return float("nan")


def specials():
    return [1.0, float("inf"), -np.inf, np.nan]


def in_record():
    return Point(np.float64("nan"), -np.inf)


def id_real(x):
    return np.float64(x)


def ramp(n):
    a = np.arange(n) * 0.5
    if n > 5:
        a[3] = np.nan
        a[5] = np.inf
    return a


def pair():
    return ("a", np.int32(1))


def point():
    return Point(1.5, np.float32(-2.0))


def tags():
    return {"solo"}


def no_ints():
    return np.array([], dtype=np.int64)


def no_strs():
    return ()


def grid():
    return np.array([[1, 3, 5], [2, 4, 6]])


def rows():
    return [Row("a", np.float64(0.5)), Row("b", None)]


def levels():
    return np.array(["lo", "hi", "lo"])


def missing():
    return None


def tally():
    return {"a": np.int64(2)}


def uniq():
    return np.unique(np.array([3, 1, 3, 2]))


def triple():
    return np.array([7, 8, 9], dtype=np.uint16)


def floats_as_ints():
    return np.array([1.0, 2.0])


def named():
    return XY(np.float64(1.5), -2)


def squares():
    return (i * i for i in range(3))


def arg_kinds(xs, grid, s):
    return [describe(xs), describe(grid), describe(s)]


def describe(v):
    if isinstance(v, np.ndarray):
        return "ndarray %s %s" % (v.dtype, list(v.shape))
    return type(v).__name__


def total(xs):
    return np.sum(xs)


def series():
    import pandas as pd  # here, not at the top: the pool starts as fast without it

    return pd.Series([1.5, 2.5, float("nan")])


def frame():
    import pandas as pd

    return pd.DataFrame({"x": [1.5, 0.0], "y": [np.int64(-2), 1]})


def in_records():
    return [Point(np.nan, 1.5), Point(np.inf, -np.inf)]


def in_cloud():
    return {"points": [Point(np.nan, 0.5), Point(1.0, np.inf)], "scale": float("nan")}


def swap(p):
    return Point(p["y"], p["x"])


common = [doubled, count, eye, one, not_a_number, specials, in_record, id_real, ramp, pair, point, tags, no_ints,
          no_strs, grid, rows, levels, missing, tally, uniq, triple]
table = {1001 + i: fn for i, fn in enumerate(common)}
table.update({1022: floats_as_ints, 1025: named, 1026: squares, 4027: arg_kinds, 4028: total, 1029: series, 1030: frame,
              1031: in_records, 1032: in_cloud, 1033: swap})
nexus.serve(table)
