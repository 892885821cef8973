"""Protocol 2's arrays for the nexus Python runtime (docs/internals.md,
"Arrays"): blobs into the lists a function gets, and results into blobs.

Loaded only when a call uses arrays, to keep a pool's start-up short.
"""

import sys
from array import array
from itertools import chain

from ._wire import _BLOB, _MIN_ARRAY, MAX_FRAME, _ProtocolError, _dumps, _encode

_DTYPES = {"i8": ("q", 8), "i4": ("i", 4), "f8": ("d", 8)}
_LITTLE = sys.byteorder == "little"
_MAX_RANK = 64  # memoryview's limit; deeper arrays are nested by hand


def take(message, blobs):
    """Check a message's array descriptors against the blobs before it.

    Returns [(path, blob, format, shape)]; a mismatch is a protocol error.
    """
    kind = message["type"]
    descs = message.get("arrays")
    if descs is None:
        descs = []
    if type(descs) is not list:
        raise _ProtocolError("%s message: arrays is not an array" % kind)
    if len(descs) != len(blobs):
        raise _ProtocolError("%s message describes %d arrays but %d blobs came before it" % (kind, len(descs), len(blobs)))
    out = []
    for i, desc in enumerate(descs):
        if type(desc) is not dict:
            raise _ProtocolError("%s message: arrays[%d] is not an object" % (kind, i))
        path, dtype, shape = desc.get("path"), desc.get("dtype"), desc.get("shape")
        fmt = _DTYPES.get(dtype) if type(dtype) is str else None
        if fmt is None:
            raise _ProtocolError("%s message: arrays[%d] has dtype %s (want i4, i8 or f8)" % (kind, i, _dumps(dtype, str, True)))
        # shape [] (rank 0) is one number: how a NaN or an infinity comes as an argument
        if type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape):
            raise _ProtocolError("%s message: arrays[%d] has shape %s (want a list of counts)" % (kind, i, _dumps(shape, str, True)))
        count = 1
        for n in shape:
            count *= n
        if count * fmt[1] != len(blobs[i]):
            raise _ProtocolError("%s message: arrays[%d] of shape %s and dtype %s needs %d bytes, but its blob has %d"
                                 % (kind, i, _dumps(shape, str, True), dtype, count * fmt[1], len(blobs[i])))
        if type(path) is not list or not all(type(p) in (int, str) for p in path):
            raise _ProtocolError("%s message: arrays[%d] has path %s (want a list of keys and indices)" % (kind, i, _dumps(path, str, True)))
        out.append((path, blobs[i], fmt[0], shape))
    return out


def places(call_id, args, arrays):
    """Find where each array goes in args (each place holds null).

    The reader does this, so that a bad path is a protocol error; the
    worker thread fills the places in (fill), off the reader.
    """
    found = []
    for path, blob, fmt, shape in arrays:
        if not path or type(path[0]) is not int:
            raise _ProtocolError("call %s: array path %s does not start with an argument index" % (call_id, _dumps(path, str, True)))
        container = args
        for depth, key in enumerate(path):
            if type(key) is int:
                there = type(container) is list and 0 <= key < len(container)
            else:
                there = type(container) is dict and key in container
            if not there:
                raise _ProtocolError("call %s: array path %s: nothing at step %d" % (call_id, _dumps(path, str, True), depth))
            if depth < len(path) - 1:
                container = container[key]
        if container[key] is not None:
            raise _ProtocolError("call %s: array path %s holds a value, not the null placeholder" % (call_id, _dumps(path, str, True)))
        found.append((container, key, blob, fmt, shape, len(path) == 1))
    return found


def fill(places, numpy=False):
    """Put the arrays in their places; with numpy, an argument that is a
    whole array (a shape, not a number) as an ndarray, straight from its blob."""
    np = None
    if numpy:
        np = sys.modules.get("numpy")
        if np is None:
            import numpy as np  # the manifest asked for numpy arrays
    for container, key, blob, fmt, shape, whole in places:
        if np is not None and shape and whole:
            container[key] = np.frombuffer(blob, dtype=_NUMPY[fmt]).reshape(shape).copy()
        else:
            container[key] = _unpack(blob, fmt, shape)


_NUMPY = {"q": "<i8", "i": "<i4", "d": "<f8"}


def _unpack(blob, fmt, shape):
    """The nested lists of ints or floats an array stands for, as JSON gives them."""
    if not shape:  # rank 0: the number itself
        one = array(fmt, blob)
        if not _LITTLE:
            one.byteswap()
        return one[0]
    if _LITTLE and 0 not in shape and len(shape) <= _MAX_RANK:
        return memoryview(blob).cast(fmt, shape).tolist()  # no copy of the blob
    flat = array(fmt)
    flat.frombytes(blob)
    if not _LITTLE:
        flat.byteswap()
    flat = flat.tolist()
    # Innermost level first: every level's lists are slices of the one below.
    for depth in range(len(shape) - 1, 0, -1):
        n = shape[depth]
        count = 1
        for d in shape[:depth]:
            count *= d
        flat = [flat[i * n:(i + 1) * n] for i in range(count)]
    return flat


def result(call, value):
    """The frames of a result sent as one array, or None to send JSON.

    Only a rectangular nest of ret.rank lists of exact ints (an "int" hint)
    or ints and floats (a "real" hint) goes as an array; anything else goes
    as JSON, whose outcome (a bool as true, a NaN's error, ...) is the one
    the client gets either way.
    """
    ret = call.ret
    rank = ret.get("rank") if type(ret) is dict else None
    number = ret.get("number") if type(ret) is dict else None
    if type(rank) is not int or rank < 1 or number not in ("int", "real"):
        return None
    if rank == 1 and len(value) < _MIN_ARRAY:
        return None
    shape = [len(value)]
    rows = [value]  # the lists at the current depth; at the end, the innermost ones
    for depth in range(1, rank):
        rows = rows[0] if len(rows) == 1 else list(chain.from_iterable(rows))
        if not set(map(type, rows)) <= _LIST_TYPES:
            return None
        lengths = set(map(len, rows))
        if len(lengths) != 1:
            return None  # ragged
        shape.append(lengths.pop())
    count = 1
    for n in shape:
        count *= n
    if count < _MIN_ARRAY:
        return None  # empty or small: as cheap as JSON
    # Row by row, without a flat copy of a matrix.
    kinds = set(map(type, value)) if rank == 1 else set(map(type, chain.from_iterable(rows)))
    if number == "int":
        if not kinds <= _INT_TYPES:
            return None  # a bool, a float, ...: JSON says what they are
        code, dtype = "q", "i8"
    else:
        if not kinds <= _REAL_TYPES:
            return None
        code, dtype = "d", "f8"
    # NaN and infinity have no JSON form: JSON gives today's error. A finite
    # sum proves every element finite; one that overflows only costs the
    # JSON path.
    if dtype == "f8" and not _isfinite(sum(map(sum, rows))):
        return None
    nbytes = count * 8
    if nbytes > MAX_FRAME:
        return None
    pieces = _Pieces(nbytes, code, rows, rank == 1)
    if int in kinds:
        # An int beyond 64 bits (or a double's range) fails only when
        # converted: convert once to see, before any byte is sent.
        try:
            for _ in pieces:
                pass
        except OverflowError:
            return None
    payload = _encode({"type": "result", "id": call.id, "value": None,
                       "arrays": [{"path": [], "dtype": dtype, "shape": shape}]})
    return ((_BLOB | nbytes).to_bytes(4, "big"), pieces, len(payload).to_bytes(4, "big") + payload)


_PIECE = 1 << 17  # elements converted and written at a time (1 MiB)


class _Pieces:
    """A result array's bytes, made a piece at a time as they are written:
    an array of the whole result was as large again as the blob nexus
    gets, in memory touched for the first time, which large calls pay for.

    len() is the size in bytes; iterating gives the pieces, each a byte
    view of an array of about _PIECE elements, and may be done again.
    """

    __slots__ = ("nbytes", "code", "rows", "flat")

    def __init__(self, nbytes, code, rows, flat):
        self.nbytes, self.code, self.rows, self.flat = nbytes, code, rows, flat

    def __len__(self):
        return self.nbytes

    def __iter__(self):
        code, rows = self.code, self.rows
        if self.flat:  # rows is [value], one list of numbers
            value = rows[0]
            for i in range(0, len(value), _PIECE):
                yield _piece(code, value[i:i + _PIECE])
            return
        data = array(code)
        for row in rows:
            if type(row) is list:
                data.fromlist(row)
            else:
                data.extend(row)
            if len(data) >= _PIECE:
                yield _piece_of(data)
                data = array(code)
        if data:
            yield _piece_of(data)


def _piece(code, numbers):
    data = array(code)
    data.fromlist(numbers)
    return _piece_of(data)


def _piece_of(data):
    if not _LITTLE:
        data.byteswap()
    return memoryview(data).cast("B")


_LIST_TYPES = frozenset((list, tuple))
_INT_TYPES = frozenset((int,))
_REAL_TYPES = frozenset((int, float))


def _isfinite(x):
    # int - int and inf - inf: only a finite float or an int is itself minus itself == 0
    return x - x == 0
