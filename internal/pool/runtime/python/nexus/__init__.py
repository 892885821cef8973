"""The nexus pool runtime for Python.

A pool file registers its functions and hands control to nexus:

    import nexus

    def fighterDamage(ac):
        return 12

    nexus.serve({9: fighterDamage})

nexus starts the file, sends it calls over the nexus pool protocol
(docs/pool-protocol.md in the nexus repository) and returns the results to
its clients. This module speaks that protocol; it needs only the standard
library. nexus embeds it and puts it on PYTHONPATH.
"""

import base64
import json
import os
import signal
import struct
import sys
import threading
import time
import traceback

try:
    import ctypes
except ImportError:  # a Python without ctypes cannot interrupt calls
    ctypes = None

__all__ = [
    "serve", "progress", "log", "cancelled", "sleep", "Cancelled",
    "Content", "text", "image", "audio", "resource",
]

PROTOCOL = 1
MAX_FRAME = 256 << 20

# A print must never reach the protocol; nexus already sends fd 1 to its
# stderr, but a pool may run some other way.
sys.stdout = sys.stderr


class Cancelled(BaseException):
    """Raised in a call's thread when nexus cancels the call.

    It derives from BaseException, like KeyboardInterrupt, so that
    `except Exception` does not swallow it.
    """


NexusCancelled = Cancelled  # the name docs/pool-protocol.md uses


class _ProtocolError(Exception):
    pass


class _Call:
    """One call in flight."""

    __slots__ = ("id", "progress", "lock", "woken", "thread_id", "cancelled", "interrupted", "done")

    def __init__(self, call_id, progress):
        self.id = call_id
        self.progress = progress
        self.lock = threading.Lock()  # orders cancellation against the end of the call
        self.woken = threading.Event()  # set on cancel: wakes nexus.sleep
        self.thread_id = None
        self.cancelled = False
        self.interrupted = False  # Cancelled was sent to the thread (at most once)
        self.done = False  # the function has returned: never interrupt it now


_out_fd = None
_write_lock = threading.Lock()
_calls = {}  # id -> _Call
_current = threading.local()


# --- public API -------------------------------------------------------------


def serve(table):
    """Serve the functions of `table` ({mid: function}) until nexus says stop.

    Sends `ready`, then runs each call in its own thread. Exits the process
    with status 0 (without running atexit handlers: calls may still be
    running) when nexus closes the pipe or sends `shutdown`. Never returns.
    """
    table = _check_table(table)
    in_fd, out_fd = _descriptors()
    global _out_fd
    _out_fd = out_fd
    reader = os.fdopen(in_fd, "rb", buffering=1 << 16)
    try:
        signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: nexus's SIGKILL still ends the group
        pass
    _send({"type": "ready", "protocol": PROTOCOL, "lang": "py", "pid": os.getpid(), "mids": sorted(table), "concurrent": True})
    try:
        while True:
            payload = _read_frame(reader)
            if payload is None:
                _leave(0)  # end of file without shutdown: nexus is gone
            message = _decode(payload)
            kind = message.get("type")
            if kind == "call":
                _start_call(table, message)
            elif kind == "cancel":
                _cancel(message.get("id"))
            elif kind == "shutdown":
                break
            # other types are ignored: newer nexus versions may send them
    except _ProtocolError as err:
        sys.stderr.write("nexus pool: protocol error: %s\n" % err)
        _exit(2)
    _exit(0)


def progress(done, total=None, message=None):
    """Report the current call's progress: `done` out of `total` (if known).

    Does nothing outside a call's thread, or when the client did not ask for
    progress.
    """
    call = getattr(_current, "call", None)
    if call is None or not call.progress:
        return
    _check_number("done", done)
    frame = {"type": "progress", "id": call.id, "progress": done}
    if total is not None:
        _check_number("total", total)
        frame["total"] = total
    if message is not None:
        frame["message"] = str(message)
    _send(frame)


def log(level, data):
    """Send a log record at an MCP level ("debug", "info", "warning", ...).

    `data` is any JSON value; what json cannot encode is sent as its str().
    The record belongs to the current call when there is one.
    """
    frame = {"type": "log", "level": str(level), "data": data}
    call = getattr(_current, "call", None)
    if call is not None:
        frame["id"] = call.id
    payload = _encode(frame, default=str)
    if _out_fd is None:  # not serving (a function run by hand): keep the record visible
        sys.stderr.write(payload.decode("utf-8") + "\n")
        return
    _send_payload(payload)


def cancelled():
    """True once the current call has been cancelled."""
    call = getattr(_current, "call", None)
    return call is not None and call.cancelled


def sleep(seconds):
    """Sleep, but raise Cancelled as soon as the current call is cancelled.

    time.sleep cannot be interrupted: a cancelled call sees Cancelled only
    once it returns.
    """
    call = getattr(_current, "call", None)
    if call is None:
        time.sleep(seconds)
        return
    if call.woken.wait(seconds):
        with call.lock:
            # Raise here, once: drop the Cancelled already sent to this thread.
            if call.interrupted:
                _set_async_exc(call.thread_id, None)
        raise Cancelled()


class Content:
    """A function's reply as MCP content blocks, optionally with a value.

        return nexus.Content([nexus.image(png, "image/png"), nexus.text("a plot")])

    The blocks reach the client as they are (an image shows as an image);
    `value`, when given, is the function's typed result as well.
    """

    __slots__ = ("blocks", "value")

    def __init__(self, blocks, value=None):
        if isinstance(blocks, dict):
            blocks = [blocks]
        blocks = list(blocks)
        for i, block in enumerate(blocks):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise TypeError("nexus.Content: block %d is not a content block (use nexus.text, image, audio or resource)" % i)
        self.blocks = blocks
        self.value = value


def text(s):
    """A text content block."""
    return {"type": "text", "text": str(s)}


def image(data, mime_type):
    """An image content block from the image's bytes ("image/png", ...)."""
    return {"type": "image", "data": _base64(data), "mimeType": str(mime_type)}


def audio(data, mime_type):
    """An audio content block from the sound's bytes ("audio/wav", ...)."""
    return {"type": "audio", "data": _base64(data), "mimeType": str(mime_type)}


def resource(data, mime_type, uri):
    """An embedded resource block: str data as text, bytes as a base64 blob."""
    body = {"uri": str(uri), "mimeType": str(mime_type)}
    if isinstance(data, str):
        body["text"] = data
    else:
        body["blob"] = _base64(data)
    return {"type": "resource", "resource": body}


def _base64(data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return base64.b64encode(bytes(data)).decode("ascii")


# --- calls ------------------------------------------------------------------


def _start_call(table, message):
    call_id = message.get("id")
    mid = message.get("mid")
    args = message.get("args")
    fn = table.get(mid) if type(mid) is int else None
    if fn is None:
        mids = ", ".join(str(m) for m in sorted(table))
        _send({"type": "error", "id": call_id, "message": "unknown mid %s (this pool has %s)" % (mid, mids)})
        return
    if not isinstance(args, list):
        raise _ProtocolError("call %s: args is not an array" % call_id)
    call = _Call(call_id, message.get("progress") is True)
    _calls[call_id] = call
    threading.Thread(target=_run, args=(call, fn, args), name="nexus-call-%s" % call_id, daemon=True).start()


def _run(call, fn, args):
    """Run one call in its own thread and send its one reply."""
    _current.call = call
    payload = None
    # Cancelled arrives asynchronously, at most once, and only while
    # call.done is false; every place it can land is inside this try.
    try:
        try:
            with call.lock:
                call.thread_id = threading.get_ident()
                early = call.cancelled
            if early:
                raise Cancelled()
            payload = _invoke(call, fn, args)
        finally:
            with call.lock:
                call.done = True
                if call.interrupted:
                    _set_async_exc(call.thread_id, None)  # drop it if not yet raised
    except Cancelled:
        payload = _cancelled_payload(call.id)
    except BaseException as err:  # the runtime itself failed: still answer once
        payload = _encode({"type": "error", "id": call.id, "message": "nexus runtime: %s" % type(err).__name__})
    _calls.pop(call.id, None)
    _current.call = None
    _send_payload(payload)


def _invoke(call, fn, args):
    """Apply fn and encode the reply; any failure becomes an error reply."""
    try:
        value = fn(*args)
    except Cancelled:
        return _cancelled_payload(call.id)
    except BaseException as err:  # a pool survives whatever a function raises
        return _error_payload(call.id, err)
    frame = {"type": "result", "id": call.id, "value": value}
    if isinstance(value, Content):
        frame["value"] = value.value
        frame["content"] = value.blocks
    try:
        payload = _encode(frame)
    except Exception as err:  # not JSON: a set, NaN, ...
        return _error_payload(call.id, err)
    if len(payload) > MAX_FRAME:
        return _encode({"type": "error", "id": call.id, "message": "the result takes %d bytes, over the %d MiB frame limit" % (len(payload), MAX_FRAME >> 20)})
    return payload


def _cancel(call_id):
    call = _calls.get(call_id)
    if call is None:
        return  # finished already
    with call.lock:
        call.cancelled = True
        call.woken.set()
        if call.done or call.interrupted or call.thread_id is None:
            return  # finished, already told, or not started (it checks call.cancelled)
        call.interrupted = True
        _set_async_exc(call.thread_id, Cancelled)


def _set_async_exc(thread_id, exc):
    """Raise exc in the thread at its next bytecode, or with None drop a pending one."""
    if ctypes is None:
        return
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), None if exc is None else ctypes.py_object(exc))


def _error_payload(call_id, err):
    name = type(err).__name__
    try:
        text = str(err)
    except Exception:  # an exception whose __str__ fails still gets reported
        text = "<unprintable %s>" % name
    message = "%s: %s" % (name, text) if text else name
    trace = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    return _encode({"type": "error", "id": call_id, "message": message, "traceback": trace})


def _cancelled_payload(call_id):
    return _encode({"type": "error", "id": call_id, "message": "cancelled", "cancelled": True})


# --- values -----------------------------------------------------------------


def _json_default(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")  # the protocol's form for bytes
    raise TypeError("Object of type %s is not JSON serializable" % type(value).__name__)


def _encode(obj, default=_json_default):
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=default)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, it is still valid JSON
        return json.dumps(obj, allow_nan=False, separators=(",", ":"), default=default).encode("ascii")


def _check_number(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("nexus.progress: %s must be a number, not %s" % (name, type(value).__name__))


def _check_table(table):
    if not isinstance(table, dict):
        raise TypeError("nexus.serve wants a dict {mid: function}, not %s" % type(table).__name__)
    for mid, fn in table.items():
        if type(mid) is not int:
            raise TypeError("nexus.serve: mid %r is not an int" % (mid,))
        if not callable(fn):
            raise TypeError("nexus.serve: the function for mid %d is not callable" % mid)
    return dict(table)


# --- frames -----------------------------------------------------------------


def _descriptors():
    in_fd = os.environ.get("NEXUS_POOL_IN")
    out_fd = os.environ.get("NEXUS_POOL_OUT")
    if in_fd is None or out_fd is None:
        sys.stderr.write(
            "This program is a nexus pool: nexus starts it and talks to it over a pipe "
            "(NEXUS_POOL_IN is not set). Run the program through nexus instead.\n"
        )
        _exit(2)
    try:
        fds = int(in_fd), int(out_fd)
        for fd in fds:
            os.fstat(fd)
            os.set_inheritable(fd, False)  # children of the pool must not hold the protocol open
    except (ValueError, OSError) as err:
        sys.stderr.write("nexus pool: bad NEXUS_POOL_IN/NEXUS_POOL_OUT (%s, %s): %s\n" % (in_fd, out_fd, err))
        _exit(2)
    return fds


def _read_frame(reader):
    """One frame's payload, or None at a clean end of file."""
    header = reader.read(4)
    if not header:
        return None
    if len(header) < 4:
        raise _ProtocolError("end of file inside a frame header")
    (size,) = struct.unpack(">I", header)
    if size < 2 or size > MAX_FRAME:
        raise _ProtocolError("frame length %d is outside 2..%d" % (size, MAX_FRAME))
    payload = reader.read(size)
    if len(payload) < size:
        raise _ProtocolError("end of file inside a frame of %d bytes" % size)
    return payload


def _decode(payload):
    try:
        message = json.loads(payload)
    except ValueError as err:
        raise _ProtocolError("bad message: %s" % err)
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise _ProtocolError("a message is not an object with a type")
    return message


def _send(obj):
    _send_payload(_encode(obj))


def _send_payload(payload):
    frame = memoryview(struct.pack(">I", len(payload)) + payload)
    with _write_lock:
        try:
            while frame:
                frame = frame[os.write(_out_fd, frame):]
        except OSError:
            _leave(0)  # nexus is gone: so are we


def _on_sigterm(signum, frame):
    # nexus stops a pool's group with SIGTERM, and the kernel sends it when
    # nexus dies (its parent-death signal): take our children along.
    _leave(128 + signum)


def _leave(status):
    """Exit, and stop every process this pool started (its process group).

    nexus kills the group itself when it stops a pool, but when nexus dies
    it cannot: children started by functions would outlive it.
    """
    try:
        sys.stderr.flush()
    except Exception:
        pass
    try:
        if os.getpgrp() == os.getpid():  # only a group we lead: never the shell's
            os.killpg(0, signal.SIGKILL)  # this process too
    except OSError:
        pass
    _exit(status)


def _exit(status):
    try:
        sys.stderr.flush()
        sys.__stdout__.flush()
    finally:
        os._exit(status)
