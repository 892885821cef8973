"""Results given their declared shape (docs/internals.md, "Declared
types"): numpy and pandas values, dataclasses, namedtuples, sets and other
iterables, NaN and infinity.

Loaded only when a result needs it. It never imports numpy or pandas: it
looks them up in sys.modules, where they are only if the user's code has
imported them, so that a pool without them starts and runs as before.
"""

import sys

from ._wire import _BLOB, _MIN_ARRAY, MAX_FRAME, _encode

# NaN and the infinities on the wire: JSON has no numbers for them, and
# nexus reads these strings where a Real is declared.
_NAN, _INF, _NEG_INF = "NaN", "Infinity", "-Infinity"


class ShapeError(TypeError):
    """A result that cannot have its declared type; path is where, outermost first."""

    def __init__(self, what, t):
        TypeError.__init__(self)
        self.what = what
        self.t = t
        self.path = []

    def __str__(self):
        where = "".join("[%d]" % p if type(p) is int else ".%s" % p for p in reversed(self.path))
        return "the result%s is %s where its type says %s" % (" at " + where if where else "", self.what, describe(self.t))


def describe(t):
    """A declared type as morloc writes it: [Int], (Str, Real), {x: Real}, ?Int."""
    if type(t) is str:
        return {"int": "Int", "real": "Real", "bool": "Bool", "str": "Str", "null": "()"}.get(t, "*")
    if type(t) is dict:
        if "list" in t:
            return "[%s]" % describe(t["list"])
        if "opt" in t:
            return "?" + describe(t["opt"])
        if "tuple" in t:
            return "(%s)" % ", ".join(describe(x) for x in t["tuple"])
        if "record" in t:
            return "{%s}" % ", ".join("%s: %s" % (k, describe(v)) for k, v in t["record"].items())
        if "map" in t:
            return "Map Str %s" % describe(t["map"])
    return "*"


def shape(value, t):
    """value converted to the JSON values of the declared type t.

    What cannot be converted is left as it is, for nexus's type check to
    name (a str where an Int is declared); a ShapeError is raised only
    where the value's own type says it is wrong (a float ndarray where
    [Int] is declared), which nexus could not see in the numbers.
    """
    try:
        return _conv(value, t, _modules())
    except ShapeError as err:
        raise TypeError(str(err)) from None


def _modules():
    return sys.modules.get("numpy"), sys.modules.get("pandas")


def _real(x):
    if x - x == 0:  # finite
        return x
    return _NAN if x != x else (_INF if x > 0 else _NEG_INF)


_SCALARS = frozenset((str, int, bool, type(None)))
_PLAIN = {  # element types a list of t may hold and go to JSON as they are
    "int": frozenset((int,)),
    "str": frozenset((str,)),
    "bool": frozenset((bool,)),
    "null": frozenset((type(None),)),
}


def _conv(v, t, mods):
    tv = type(v)
    if t == "real":
        if tv is float:
            return _real(v)
        if tv is int or tv is bool:
            return v
    elif type(t) is str:
        if tv in _SCALARS:
            return v
    elif type(t) is dict:
        if "list" in t:
            return _list(v, t, mods)
        if "opt" in t:
            return None if v is None else _conv(v, t["opt"], mods)
        if "record" in t:
            return _record(v, t, mods)
        if "tuple" in t:
            return _tuple(v, t, mods)
        if "map" in t:
            return _map(v, t, mods)
    np, pd = mods
    if np is not None:
        if isinstance(v, np.generic):
            return _conv(_scalar(v, t, np), t, mods)
        if isinstance(v, np.ndarray):
            if v.ndim == 0:
                return _conv(_scalar(v[()], t, np), t, mods)
            return _generic(_ndarray_list(v, None, np), mods)
    return _generic(v, mods)


def _scalar(x, t, np):
    """A numpy scalar as the Python value it stands for."""
    if isinstance(x, np.bool_):
        if t in ("int", "real"):
            raise ShapeError("a numpy bool", t)
        return bool(x)
    if isinstance(x, np.floating) and t == "int":
        raise ShapeError("a numpy %s" % x.dtype.name, t)
    return x.item()


def _generic(v, mods):
    """v as JSON values with no declared type to go by (`*`)."""
    tv = type(v)
    if tv in _SCALARS:
        return v
    if tv is float:
        return _real(v)
    if tv is list or tv is tuple:
        return [_generic(x, mods) for x in v]
    if tv is dict:
        return {k: _generic(x, mods) for k, x in v.items()}
    np, pd = mods
    if np is not None:
        if isinstance(v, np.generic):
            return _generic(v.item(), mods)
        if isinstance(v, np.ndarray):
            return _generic(_ndarray_list(v, None, np), mods)
    if pd is not None:
        if isinstance(v, pd.DataFrame):
            return _generic(v.to_dict("records"), mods)
        if isinstance(v, pd.Series):
            return _generic(v.tolist(), mods)
    if isinstance(v, (set, frozenset)):
        return [_generic(x, mods) for x in v]
    fields = _fields(v)
    if fields is not None:
        return {k: _generic(x, mods) for k, x in fields}
    if isinstance(v, (list, tuple)):
        return [_generic(x, mods) for x in v]
    if isinstance(v, dict):
        return {k: _generic(x, mods) for k, x in v.items()}
    return v  # for the encoder: bytes go as base64, anything else fails as ever


def _fields(v):
    """A dataclass instance's or a namedtuple's (name, value) pairs, else None."""
    if hasattr(type(v), "__dataclass_fields__"):
        dataclasses = sys.modules.get("dataclasses")
        if dataclasses is not None and not isinstance(v, type):
            return [(f.name, getattr(v, f.name)) for f in dataclasses.fields(v)]
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return list(zip(v._fields, v))
    return None


def _elements(t):
    """The innermost element type and the rank of nested lists t."""
    rank = 0
    while type(t) is dict and "list" in t:
        t = t["list"]
        rank += 1
    return t, rank


def _ndarray_list(a, t, np):
    """An ndarray as nested lists, checked against the declared list type t."""
    elem, rank = _elements(t) if t is not None else (None, 0)
    kind = a.dtype.kind
    if elem in ("int", "real") and kind in "bfc":
        if kind == "b" or elem == "int" and kind == "f" or kind == "c":
            raise ShapeError("a numpy array of %s" % a.dtype.name, t)
    if rank and a.ndim != rank and kind in "iufb":
        raise ShapeError("a numpy array of %d dimensions" % a.ndim, t)
    if kind == "f" and not np.isfinite(a).all():
        return _spell(a.tolist(), a.ndim)
    return a.tolist()


def _spell(x, depth):
    if depth == 1:
        return [_real(f) for f in x]
    return [_spell(r, depth - 1) for r in x]


def _list(v, t, mods):
    et = t["list"]
    tv = type(v)
    if tv is not list:
        np, pd = mods
        if np is not None and isinstance(v, np.ndarray):
            if v.ndim == 0:
                raise ShapeError("a numpy array of 0 dimensions", t)
            if v.dtype.kind in "iufb":
                return _ndarray_list(v, t, np)
            v = v.tolist()
        elif pd is not None and isinstance(v, pd.DataFrame):
            v = v.to_dict("records") if type(et) is dict and ("record" in et or "map" in et) else v.values.tolist()
        elif pd is not None and isinstance(v, pd.Series):
            v = v.tolist()
        elif tv is dict:
            v = [list(kv) for kv in v.items()]  # a Map of other keys: [key, value] pairs
        elif tv in _SCALARS or tv is float or tv is bytes:
            return v  # not a list: nexus names the mismatch
        else:
            try:
                v = list(v)  # a tuple, a set, a generator, any iterable
            except TypeError:
                return v
    kinds = set(map(type, v))
    plain = _PLAIN.get(et) if type(et) is str else None
    if plain is not None and kinds <= plain:
        return v
    if et == "real" and kinds <= _REAL_TYPES:
        return v if _finite(v) else [_real(x) if type(x) is float else x for x in v]
    if type(et) is dict and "record" in et and kinds <= _DICT and _flat(et):
        return [_record_dict(x, et, mods) for x in v] if _needs_record_look(v, et) else v
    out = []
    for i, x in enumerate(v):
        try:
            out.append(_conv(x, et, mods))
        except ShapeError as err:
            err.path.append(i)
            raise
    return out


_REAL_TYPES = frozenset((int, float))
_DICT = frozenset((dict,))


def _finite(xs):
    try:
        s = sum(xs)
    except OverflowError:
        return False
    return s - s == 0


def _flat(rt):
    """Whether a record type's fields are all scalars (or optional ones)."""
    for ft in rt["record"].values():
        if type(ft) is dict and "opt" in ft:
            ft = ft["opt"]
        if type(ft) is not str:
            return False
    return True


def _needs_record_look(rows, rt):
    """Whether any row of plain dicts holds a value JSON cannot take as is."""
    fine = _SCALARS
    for row in rows:
        for x in row.values():
            tx = type(x)
            if tx not in fine and (tx is not float or x - x != 0):
                return True
    return False


def _record(v, t, mods):
    if type(v) is dict:
        return _record_dict(v, t, mods)
    fields = _fields(v)
    if fields is None:
        np, pd = mods
        if pd is not None:
            if isinstance(v, pd.DataFrame):
                if len(v) != 1:
                    raise ShapeError("a data frame of %d rows" % len(v), t)
                fields = list(v.to_dict("records")[0].items())
            elif isinstance(v, pd.Series):
                fields = list(v.to_dict().items())
        if fields is None:
            if isinstance(v, dict):
                fields = list(v.items())
            else:
                return _generic(v, mods)
    return _record_dict(dict(fields), t, mods)


def _record_dict(v, t, mods):
    types = t["record"]
    out = {}
    for k, x in v.items():
        try:
            out[k] = _conv(x, types.get(k, "any"), mods)
        except ShapeError as err:
            err.path.append(k)
            raise
    return out


def _tuple(v, t, mods):
    items = t["tuple"]
    np, pd = mods
    if np is not None and isinstance(v, np.ndarray) and v.ndim == 1:
        v = v.tolist()
    if not isinstance(v, (list, tuple)):
        return _generic(v, mods)
    out = []
    for i, x in enumerate(v):
        try:
            out.append(_conv(x, items[i] if i < len(items) else "any", mods))
        except ShapeError as err:
            err.path.append(i)
            raise
    return out


def _map(v, t, mods):
    vt = t["map"]
    np, pd = mods
    if pd is not None and isinstance(v, pd.Series):
        v = v.to_dict()
    if not isinstance(v, dict):
        return _list(v, {"list": {"tuple": ["str", vt]}}, mods)
    out = {}
    for k, x in v.items():
        try:
            out[k if type(k) is str else str(k)] = _conv(x, vt, mods)
        except ShapeError as err:
            err.path.append(k)
            raise
    return out


def ndarray_result(call, a):
    """The frames of an ndarray result sent as one array, or None for JSON.

    Straight from the array's memory: no list is made of it. NaN and the
    infinities go too; nexus writes them as it writes them from JSON.
    """
    ret = call.ret
    rank = ret.get("rank") if type(ret) is dict else None
    number = ret.get("number") if type(ret) is dict else None
    if type(rank) is not int or a.ndim != rank or a.size < _MIN_ARRAY or number not in ("int", "real"):
        return None
    np = sys.modules["numpy"]
    kind = a.dtype.kind
    if kind == "f" and number == "real" or kind in "iu" and number == "real":
        data, dtype = np.ascontiguousarray(a, dtype="<f8"), "f8"
    elif kind in "iu" and number == "int":
        if kind == "u" and a.dtype.itemsize == 8 and a.max() > 0x7FFFFFFFFFFFFFFF:
            return None
        data, dtype = np.ascontiguousarray(a, dtype="<i8"), "i8"
    else:
        raise TypeError(str(ShapeError("a numpy array of %s" % a.dtype.name, returns_of(call))))
    nbytes = data.nbytes
    if nbytes > MAX_FRAME:
        return None
    payload = _encode({"type": "result", "id": call.id, "value": None,
                       "arrays": [{"path": [], "dtype": dtype, "shape": list(a.shape)}]})
    return ((_BLOB | nbytes).to_bytes(4, "big"), memoryview(data).cast("B"), len(payload).to_bytes(4, "big") + payload)


def returns_of(call):
    ret = call.ret
    t = "int" if ret.get("number") == "int" else "real"
    for _ in range(ret.get("rank", 1)):
        t = {"list": t}
    return t


def numpy_args(args, takes):
    """The arguments, each declared a list of numbers (or lists of them) as
    an ndarray of int64 or float64, for a pool whose manifest says
    "arrays": "numpy". What numpy cannot hold in that dtype and rank (a
    ragged list, an integer beyond 64 bits) stays a list."""
    if type(takes) is not list:
        return args
    np = sys.modules.get("numpy")
    if np is None:
        import numpy as np  # the manifest asked for numpy arrays
    for i, t in enumerate(takes):
        if i >= len(args) or type(args[i]) is not list:
            continue  # already an ndarray (a blob), or not a list
        elem, rank = _elements(t)
        if rank == 0 or elem not in ("int", "real"):
            continue
        dtype = np.float64 if elem == "real" else np.int64
        if not args[i]:
            args[i] = np.empty((0,) * rank, dtype)  # no rows, of no columns
            continue
        try:
            a = np.array(args[i], dtype=dtype)
        except (ValueError, TypeError, OverflowError):
            continue
        if a.ndim == rank:
            args[i] = a
    return args
