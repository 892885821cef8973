"""The nexus pool protocol's wire format for the Python runtime
(docs/internals.md, "Frames"): frames and blobs, and the JSON of
messages.

The bottom of the runtime: _runtime, _arrays and _values import from it,
and it imports none of them.
"""

# Start-up counts: this module imports only _json (the C half of json,
# without the re, enum and functools that json pulls in).

PROTOCOL = 2
MAX_FRAME = 1 << 30
_BLOB = 0x80000000  # header bit 31: a blob frame (protocol 2)
_CHUNK = 16 << 20  # a frame body is trusted with this much memory before its bytes arrive
_MIN_ARRAY = 256  # a result with fewer numbers is cheaper as JSON (nexus uses the same bound)


class _ProtocolError(Exception):
    pass


# --- JSON -------------------------------------------------------------------
#
# json's C accelerator used directly: `import json` costs more start-up than
# the rest of the runtime together (it imports re). Any surprise falls back
# to the json module.

def _fallback_json():
    import json
    global _dumps, _scan
    _dumps = lambda obj, default, ascii: json.dumps(obj, ensure_ascii=ascii, allow_nan=False, separators=(",", ":"), default=default)
    _scan = json.JSONDecoder().raw_decode


try:
    from _json import encode_basestring as _esc, encode_basestring_ascii as _esc_ascii
    from _json import make_encoder as _make_encoder, make_scanner as _make_scanner

    class _ScanContext:  # what _json's scanner reads from a json.JSONDecoder
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.__getitem__
        memo = {}

    _scan = _make_scanner(_ScanContext())

    def _dumps(obj, default, ascii):
        # A fresh encoder per call: its markers (cycle detection) are per value.
        return "".join(_make_encoder({}, default, _esc_ascii if ascii else _esc, None, ":", ",", False, False, False)(obj, 0))

    if _dumps({"a": [1, 2.5, None, "\u00e9"]}, str, False) != '{"a":[1,2.5,null,"\u00e9"]}' or _scan('{"a":[1]}', 0) != ({"a": [1]}, 9):
        _fallback_json()
except Exception:  # no _json, or one that differs
    _fallback_json()

_WHITESPACE = " \t\n\r"


def _loads(payload):
    text = payload.decode("utf-8")
    start = 0
    if text[0] in _WHITESPACE:
        start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise ValueError("no JSON value")
    if end != len(text) and text[end:].strip(_WHITESPACE):
        raise ValueError("extra data after the JSON value, at byte %d" % end)
    return value


# --- bytes and messages ----------------------------------------------------


def _base64(data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    import binascii  # built in; base64 would import re

    return binascii.b2a_base64(bytes(data), newline=False).decode("ascii")


def _json_default(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _base64(value)  # the protocol's form for bytes
    raise TypeError("Object of type %s is not JSON serializable" % type(value).__name__)


def _encode(obj, default=_json_default):
    text = _dumps(obj, default, False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, it is still valid JSON
        return _dumps(obj, default, True).encode("ascii")


# --- frames -----------------------------------------------------------------


def _frames(payload):
    """A message as the buffers of its frame."""
    return (len(payload).to_bytes(4, "big") + payload,)


def _read_body(reader, size):
    """A frame's body: bytes, or for one over _CHUNK a bytearray."""
    if size <= _CHUNK:
        body = reader.read(size)
        if len(body) < size:
            raise _ProtocolError("end of file inside a frame of %d bytes" % size)
        return body
    # A broken header costs _CHUNK at most: the whole body is allocated
    # once that much has come, and the rest read into it. Parts joined at
    # the end touched twice the body in fresh memory, which is costly.
    first = reader.read(_CHUNK)
    if len(first) < _CHUNK:
        raise _ProtocolError("end of file inside a frame of %d bytes" % size)
    body = bytearray(size)
    view = memoryview(body)
    view[:_CHUNK] = first
    del first
    got = _CHUNK
    while got < size:
        n = reader.readinto(view[got:])
        if not n:
            raise _ProtocolError("end of file inside a frame of %d bytes" % size)
        got += n
    view.release()
    return body


def _decode(payload):
    try:
        message = _loads(payload)
    except ValueError as err:
        raise _ProtocolError("bad message: %s" % err)
    if type(message) is not dict or type(message.get("type")) is not str:
        raise _ProtocolError("a message is not an object with a type")
    return message
