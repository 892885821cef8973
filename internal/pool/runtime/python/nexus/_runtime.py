"""The nexus pool runtime for Python: the protocol, calls and threads.

Its public names are the nexus package's; see nexus/__init__.py.
"""

# Start-up counts: this module imports only what the interpreter has
# already loaded, plus _thread (the C half of threading, without the re,
# enum and functools that threading pulls in) and _wire (which adds _json,
# likewise). The rest (ctypes, traceback, array) comes on the rare paths
# that need it.
import _signal
import _thread
import os
import sys
import time

from ._wire import (
    _BLOB, _MIN_ARRAY, MAX_FRAME, PROTOCOL, _base64, _decode, _encode, _frames, _ProtocolError, _read_body,
)

__all__ = [
    "serve", "progress", "log", "cancelled", "sleep", "Cancelled",
    "Content", "text", "image", "audio", "resource",
    "elicit", "sample", "roots", "AskError", "within_call",
]

_IDLE_SECONDS = 30.0  # a worker thread idle this long ends (the first one never does)

# A print must never reach the protocol; nexus already sends fd 1 to its
# stderr, but a pool may run some other way.
sys.stdout = sys.stderr


class Cancelled(BaseException):
    """Raised in a call's thread when nexus cancels the call.

    It derives from BaseException, like KeyboardInterrupt, so that
    `except Exception` does not swallow it.
    """


NexusCancelled = Cancelled  # an alias: pools may use either name


class AskError(Exception):
    """Raised by elicit, sample and roots when the client gives no answer.

    Its message says why: the client did not declare the capability, it
    answered with an error, or the call cannot ask anyone (the command line).
    """


class _Call:
    """One call in flight. Its cancellation state is guarded by _lock."""

    __slots__ = ("id", "progress", "ret", "arrays", "thread_id", "cancelled", "interrupted", "done", "woken",
                 "asked", "asks", "returns", "shaped", "takes")

    def __init__(self, call_id, progress, ret, arrays):
        self.id = call_id
        self.progress = progress
        self.ret = ret  # the call's "ret" hint, or None
        self.returns = None  # the declared return type ("returns"), or None
        self.shaped = False  # the result is always given its declared shape (see _values)
        self.takes = None  # the arguments' declared types, sent when they are to be numpy arrays
        self.arrays = arrays  # [(container, key, blob, format, shape, whole argument)] to fill in before the call
        self.thread_id = None
        self.cancelled = False
        self.interrupted = False  # Cancelled was sent to the thread (at most once)
        self.done = False  # the function has returned: never interrupt it now
        self.woken = None  # a lock nexus.sleep waits on, released on cancel
        self.asked = 0  # asks sent so far: the last ask number
        self.asks = None  # {ask number: [lock, answer]} waiting for nexus; released on answer, cancel and end


class _Worker:
    """A thread that runs calls, one at a time, and waits on gate between them."""

    __slots__ = ("gate", "job", "keep")


_out_fd = None
_write_lock = _thread.allocate_lock()
_lock = _thread.allocate_lock()  # orders cancellation against the start and end of calls
_calls = {}  # id -> _Call
_current = _thread._local()
_idle = []  # workers waiting for a call, the most recently busy last
_keeper = []  # the first worker, which stays when the others retire


# --- public API -------------------------------------------------------------


def serve(table):
    """Serve the functions of `table` ({mid: function}) until nexus says stop.

    Sends `ready`, then runs each call on a worker thread. Exits the process
    with status 0 (without running atexit handlers: calls may still be
    running) when nexus closes the pipe or sends `shutdown`. Never returns.
    """
    table = _check_table(table)
    in_fd, out_fd = _descriptors()
    global _out_fd
    _out_fd = out_fd
    reader = os.fdopen(in_fd, "rb", buffering=1 << 16)
    try:
        _signal.signal(_signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: nexus's SIGKILL still ends the group
        pass
    _send({"type": "ready", "protocol": PROTOCOL, "lang": "py", "pid": os.getpid(), "mids": sorted(table),
           "concurrent": True, "arrays": ["i4", "i8", "f8"]})
    try:
        _read_loop(reader, table)
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
    _write((len(payload).to_bytes(4, "big") + payload,))


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
    with _lock:
        woken = None
        if not call.cancelled:
            woken = call.woken
            if woken is None:
                woken = call.woken = _thread.allocate_lock()
                woken.acquire()
    if woken is not None:
        # As threading.Event.wait: None waits for ever, 0 or less just looks.
        if seconds is None:
            woken.acquire()
        elif not (woken.acquire(True, seconds) if seconds > 0 else woken.acquire(False)):
            return
    with _lock:
        # Raise here, once: drop the Cancelled already sent to this thread.
        if call.interrupted:
            _set_async_exc(call.thread_id, None)
    raise Cancelled()


def elicit(message, schema, key=None):
    """Ask the user, through the client, for the values `schema` describes.

    `schema` is a JSON Schema object of flat properties (MCP elicitation's
    requestedSchema). Blocks until the user answers, and returns the client's
    answer as it came: {"action": "accept", "content": {...}}, or
    {"action": "decline"} or {"action": "cancel"}. Raises AskError when the
    client cannot answer, Cancelled when the call is cancelled meanwhile.
    `key` names the question where a client sees it by name (2026-07-28's
    inputRequests); without it nexus names it after its content.
    """
    if not isinstance(schema, dict):
        raise TypeError("nexus.elicit: schema must be a dict (a JSON Schema object), not %s" % type(schema).__name__)
    return _ask("elicit", {"message": str(message), "requestedSchema": schema}, "nexus.elicit", key)


def sample(prompt, max_tokens=1000, system=None, key=None):
    """Ask the client's language model, and return the text of its reply.

    `prompt` is a str (one user message), or a list of {"role", "content"}
    dicts ("user" or "assistant"; content a str or an MCP content block).
    Blocks until the reply comes. Raises AskError when the client cannot
    answer or the reply holds no text, Cancelled when the call is cancelled.
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError("nexus.sample: max_tokens must be a positive int, not %r" % (max_tokens,))
    params = {"messages": _sample_messages(prompt), "maxTokens": max_tokens}
    if system is not None:
        params["systemPrompt"] = str(system)
    return _reply_text(_ask("sample", params, "nexus.sample", key))


def roots(key=None):
    """The client's roots (the directories the user opened), as a list of
    {"uri", "name"} dicts ("name" may be missing). Raises AskError when the
    client cannot tell, Cancelled when the call is cancelled meanwhile.
    """
    result = _ask("roots", {}, "nexus.roots", key)
    found = result.get("roots")
    if type(found) is not list:
        raise AskError("nexus.roots: the client's answer holds no list of roots")
    return found


def within_call(fn):
    """Wrap fn so that, run on another thread, it belongs to the current call.

    elicit, sample, roots, progress, log and cancelled find their call
    through the thread that runs it; a thread the function starts has none:

        with ThreadPoolExecutor() as ex:
            summaries = list(ex.map(nexus.within_call(summarise), texts))

    Outside a call it returns fn unchanged.
    """
    call = getattr(_current, "call", None)
    if call is None:
        return fn

    def run(*args, **kwargs):
        previous = getattr(_current, "call", None)
        _current.call = call
        try:
            return fn(*args, **kwargs)
        finally:
            _current.call = previous

    return run


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


# --- the reader -------------------------------------------------------------


def _read_loop(reader, table):
    """Read frames until end of file or shutdown; never waits for a call."""
    read = reader.read
    blobs = []  # blob frames waiting for the message that describes them
    while True:
        header = read(4)
        if len(header) < 4:
            if not header:
                _leave(0)  # end of file without shutdown: nexus is gone
            raise _ProtocolError("end of file inside a frame header")
        size = int.from_bytes(header, "big")
        if size & _BLOB:
            size &= ~_BLOB
            if size > MAX_FRAME:
                raise _ProtocolError("blob length %d is over %d" % (size, MAX_FRAME))
            blobs.append(_read_body(reader, size))
            continue
        if size < 2 or size > MAX_FRAME:
            raise _ProtocolError("frame length %d is outside 2..%d" % (size, MAX_FRAME))
        message = _decode(_read_body(reader, size))
        kind = message["type"]
        if blobs or "arrays" in message:
            arrays = _array_code().take(message, blobs)
            blobs = []
        else:
            arrays = None
        if kind == "call":
            _start_call(table, message, arrays)
        elif kind == "cancel":
            _cancel(message.get("id"))
        elif kind == "answer":
            _answer(message)
        elif kind == "shutdown":
            return
        # other types are ignored: newer nexus versions may send them


# --- calls ------------------------------------------------------------------


def _start_call(table, message, arrays):
    call_id = message.get("id")
    mid = message.get("mid")
    args = message.get("args")
    fn = table.get(mid) if type(mid) is int else None
    if fn is None:
        mids = ", ".join(str(m) for m in sorted(table))
        _send({"type": "error", "id": call_id, "message": "unknown mid %s (this pool has %s)" % (mid, mids)})
        return
    if type(args) is not list:
        raise _ProtocolError("call %s: args is not an array" % call_id)
    if arrays:
        arrays = _array_code().places(call_id, args, arrays)
    call = _Call(call_id, message.get("progress") is True, message.get("ret"), arrays)
    call.takes = message.get("takes")
    returns = call.returns = message.get("returns")
    if returns is not None:
        shaped = _shaped.get(mid)
        if shaped is None:
            # A record may come as a dataclass or a namedtuple, which json
            # takes for something else or not at all: look at every such
            # result. Anything else goes to json as it is, and is shaped
            # only if json refuses it.
            shaped = _shaped[mid] = type(returns) is dict and "record" in repr(returns)
        call.shaped = shaped
    _calls[call_id] = call
    job = (call, fn, args)
    try:
        worker = _idle.pop()
    except IndexError:
        worker = None
    if worker is not None:
        worker.job = job
        worker.gate.release()
        return
    # Every worker is busy: one more.
    worker = _Worker()
    worker.gate = _thread.allocate_lock()
    worker.gate.acquire()
    worker.job = job
    worker.keep = not _keeper
    try:
        _thread.start_new_thread(_work, (worker,))
    except RuntimeError as err:  # out of threads: this call fails, the pool goes on
        _calls.pop(call_id, None)
        _send({"type": "error", "id": call_id, "message": "nexus runtime: cannot start a thread for the call: %s" % err})
        return
    if worker.keep:
        _keeper.append(worker)


def _work(worker):
    """A worker thread: runs the calls handed to it until idle too long."""
    tid = _thread.get_ident()
    idle = _idle
    while True:
        job = worker.job
        worker.job = None
        frames = _run(job, tid)
        job = None  # the arguments go with the call
        # Idle before the reply goes out, so that the next call, which
        # may come as soon as nexus has the reply, finds this thread free.
        idle.append(worker)
        _write(frames)
        frames = None
        if not worker.gate.acquire(True, -1 if worker.keep else _IDLE_SECONDS):
            try:
                idle.remove(worker)
            except ValueError:  # the reader took this worker just now: its call is on the way
                worker.gate.acquire()
            else:
                return


def _run(job, tid):
    """Run one call on this thread; return the frames of its one reply."""
    call, fn, args = job
    _current.call = call
    # Cancelled arrives asynchronously, at most once, and only while
    # call.done is false; every place it can land is inside this try. Once
    # the finally has run, no Cancelled is pending for this thread, so the
    # next call it runs is safe from this one's.
    try:
        try:
            with _lock:
                call.thread_id = tid
                early = call.cancelled
            if early:
                raise Cancelled()
            frames = _invoke(call, fn, args)
        finally:
            with _lock:
                call.done = True
                if call.interrupted:
                    _set_async_exc(tid, None)  # drop it if not yet raised
                if call.asks:
                    _wake_asks(call)  # threads of the call still waiting: no answer will come
    except Cancelled:
        frames = _frames(_cancelled_payload(call.id))
    except BaseException as err:  # the runtime itself failed: still answer once
        frames = _frames(_encode({"type": "error", "id": call.id, "message": "nexus runtime: %s" % type(err).__name__}))
    _calls.pop(call.id, None)
    _current.call = None
    return frames


def _invoke(call, fn, args):
    """Apply fn and encode the reply; any failure becomes an error reply."""
    try:
        if call.arrays:
            _array_code().fill(call.arrays, call.takes is not None)
            call.arrays = None
        if call.takes is not None:
            args = _value_code().numpy_args(args, call.takes)
        value = fn(*args)
    except Cancelled:
        return _frames(_cancelled_payload(call.id))
    except BaseException as err:  # a pool survives whatever a function raises
        return _frames(_error_payload(call.id, err))
    if call.ret is not None and type(value) is list and value and (len(value) >= _MIN_ARRAY or type(value[0]) in (list, tuple)):
        try:
            frames = _array_code().result(call, value)
        except Exception:  # JSON then says what is wrong, as without the hint
            frames = None
        if frames is not None:
            return frames
    # numpy and pandas values count only when the function's module has
    # imported them; the runtime never does.
    scientific = "numpy" in _modules or "pandas" in _modules
    shaped = False
    try:
        if scientific and call.ret is not None and type(value).__name__ == "ndarray":
            frames = _value_code().ndarray_result(call, value)
            if frames is not None:
                return frames
        if call.shaped or scientific and call.returns is not None and type(value) not in _JSON_SCALARS:
            value = _value_code().shape(value, call.returns)
            shaped = True
    except Exception as err:
        return _frames(_error_payload(call.id, err))
    frame = {"type": "result", "id": call.id, "value": value}
    if isinstance(value, Content):
        frame["value"] = value.value
        frame["content"] = value.blocks
    try:
        payload = _encode(frame)
    except Exception as err:  # not JSON: a set, NaN, a numpy value, ...
        if shaped or isinstance(value, Content):
            return _frames(_error_payload(call.id, err))
        try:  # given the declared shape, it may be
            frame["value"] = _value_code().shape(value, "any" if call.returns is None else call.returns)
            payload = _encode(frame)
        except Exception as err2:
            return _frames(_error_payload(call.id, err2))
    if len(payload) > MAX_FRAME:
        return _frames(_encode({"type": "error", "id": call.id, "message": "the result takes %d bytes, over the %d MiB frame limit" % (len(payload), MAX_FRAME >> 20)}))
    return _frames(payload)


def _cancel(call_id):
    call = _calls.get(call_id)
    if call is None:
        return  # finished already
    if call.thread_id is not None and not call.done:
        _pythonapi()  # before taking the lock: the first use imports ctypes
    with _lock:
        if call.cancelled:
            return
        call.cancelled = True
        if call.woken is not None:
            call.woken.release()  # wakes nexus.sleep
        if call.asks:
            _wake_asks(call)
        if call.done or call.thread_id is None:
            return  # finished, or not started (it checks call.cancelled)
        call.interrupted = True
        _set_async_exc(call.thread_id, Cancelled)


# --- asks -------------------------------------------------------------------


def _ask(kind, params, name, key=None):
    """Send an ask for the current call and wait for nexus's answer: its result object."""
    if key is not None and not isinstance(key, str):
        raise TypeError("%s: key must be a str, not %s" % (name, type(key).__name__))
    call = getattr(_current, "call", None)
    if call is None:
        raise AskError("%s: not in a call: only a function nexus runs can ask the client "
                       "(on a thread of your own, wrap the work in nexus.within_call)" % name)
    n = None
    slot = [_thread.allocate_lock(), None]
    slot[0].acquire()
    with _lock:
        if not call.cancelled and not call.done:
            n = call.asked = call.asked + 1
            if call.asks is None:
                call.asks = {}
            call.asks[n] = slot
    if n is not None:
        try:
            message = {"type": "ask", "id": call.id, "ask": n, "kind": kind, "params": params}
            if key is not None:
                message["key"] = key
            frames = _frames(_encode(message))
        except BaseException:  # params that JSON cannot hold: the function's error
            with _lock:
                if call.asks:
                    call.asks.pop(n, None)
            raise
        _write(frames)
        slot[0].acquire()  # released by the answer, a cancel or the call's end
    answer = slot[1]
    if answer is None:
        if call.cancelled:
            with _lock:
                # Raise here, once, on the call's own thread: drop the Cancelled sent to it.
                if call.interrupted and call.thread_id == _thread.get_ident():
                    _set_async_exc(call.thread_id, None)
            raise Cancelled()
        raise AskError("%s: the call ended before the client answered" % name)
    if "error" in answer:
        raise AskError(str(answer["error"]))
    result = answer.get("result")
    if type(result) is not dict:
        raise AskError("%s: nexus answered without a result" % name)
    return result


def _answer(message):
    """Hand nexus's answer to the thread waiting for it (the reader never waits)."""
    call = _calls.get(message.get("id"))
    n = message.get("ask")
    if call is None or type(n) is not int:
        return  # the call is over, or a stray answer
    with _lock:
        slot = call.asks.pop(n, None) if call.asks else None
        if slot is not None:
            slot[1] = message
            slot[0].release()


def _wake_asks(call):
    """Release every thread of the call waiting for an answer; _lock is held."""
    asks, call.asks = call.asks, None
    for slot in asks.values():
        slot[0].release()


def _sample_messages(prompt):
    if isinstance(prompt, str):
        return [{"role": "user", "content": {"type": "text", "text": prompt}}]
    if not isinstance(prompt, (list, tuple)) or not prompt:
        raise TypeError("nexus.sample: prompt must be a str or a non-empty list of {\"role\", \"content\"} dicts, not %r" % (prompt,))
    messages = []
    for i, m in enumerate(prompt):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or "content" not in m:
            raise TypeError("nexus.sample: message %d is not a dict with a str role and a content" % i)
        content = m["content"]
        if isinstance(content, str):
            content = {"type": "text", "text": content}
        elif not isinstance(content, (dict, list)):
            raise TypeError("nexus.sample: message %d: content must be a str or a content block dict, not %s" % (i, type(content).__name__))
        m = dict(m)
        m["content"] = content
        messages.append(m)
    return messages


def _reply_text(result):
    """The text of a sampling result: its text block, or its text blocks joined."""
    content = result.get("content")
    blocks = content if isinstance(content, list) else [content]
    texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
    if not texts:
        kinds = ", ".join(str(b.get("type")) if isinstance(b, dict) else type(b).__name__ for b in blocks)
        raise AskError("nexus.sample: the model's reply holds no text (content: %s)" % kinds)
    return "".join(texts)


_api = []


def _pythonapi():
    """ctypes.pythonapi, imported on the first cancel that needs it; None without ctypes."""
    if not _api:
        try:
            import ctypes
        except ImportError:  # a Python without ctypes cannot interrupt calls
            _api.append(None)
        else:
            _api.append((ctypes.pythonapi.PyThreadState_SetAsyncExc, ctypes.c_ulong, ctypes.py_object))
    return _api[0]


def _set_async_exc(thread_id, exc):
    """Raise exc in the thread at its next bytecode, or with None drop a pending one."""
    api = _pythonapi()
    if api is None:
        return
    set_async_exc, c_ulong, py_object = api
    set_async_exc(c_ulong(thread_id), None if exc is None else py_object(exc))


def _error_payload(call_id, err):
    name = type(err).__name__
    try:
        text = str(err)
    except Exception:  # an exception whose __str__ fails still gets reported
        text = "<unprintable %s>" % name
    message = "%s: %s" % (name, text) if text else name
    import traceback  # only errors need it

    trace = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    return _encode({"type": "error", "id": call_id, "message": message, "traceback": trace})


def _cancelled_payload(call_id):
    return _encode({"type": "error", "id": call_id, "message": "cancelled", "cancelled": True})


def _array_code():
    """The code for protocol 2's arrays, loaded when a call first uses them."""
    from . import _arrays as module

    return module


def _value_code():
    """The code that gives results their declared shape, loaded when one needs it."""
    from . import _values as module

    return module


_modules = sys.modules
_shaped = {}  # mid -> whether its results are always shaped (_start_call)
_JSON_SCALARS = frozenset((str, int, bool, type(None)))


# --- values -----------------------------------------------------------------


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


def _send(obj):
    _write(_frames(_encode(obj)))


def _write(buffers):
    """Write whole frames, as one unit: a message and the blobs before it.

    buffers are bytes-like, each len() counting bytes.
    """
    with _write_lock:
        try:
            if len(buffers) == 1:
                data = buffers[0]
                n = os.write(_out_fd, data)
                if n < len(data):
                    _write_rest(buffers, n)
            elif any(map(_made_in_pieces, buffers)):
                _write_pieces(buffers)
            else:
                n = os.writev(_out_fd, buffers)  # no copy of a large blob
                if n < sum(map(len, buffers)):
                    _write_rest(buffers, n)
        except OSError:
            _leave(0)  # nexus is gone: so are we


def _made_in_pieces(buffer):
    return type(buffer).__name__ == "_Pieces"  # _arrays' result blob, made as it is written


def _write_pieces(buffers):
    """Write buffers, some of them _Pieces, each piece as it is made."""
    try:
        for b in buffers:
            for piece in (b if _made_in_pieces(b) else (b,)):
                view = memoryview(piece)
                while view:
                    view = view[os.write(_out_fd, view):]
    except OSError:
        raise
    except BaseException as err:  # part of a frame is out: nothing can follow it
        sys.stderr.write("nexus pool: writing a result array failed halfway: %r\n" % (err,))
        _leave(70)


def _write_rest(buffers, done):
    """Finish a write that the kernel cut short after done bytes."""
    for b in buffers:
        view = memoryview(b)
        if done >= len(view):
            done -= len(view)
            continue
        view = view[done:]
        done = 0
        while view:
            view = view[os.write(_out_fd, view):]


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
            os.killpg(0, _signal.SIGKILL)  # this process too
    except OSError:
        pass
    _exit(status)


def _exit(status):
    try:
        sys.stderr.flush()
        sys.__stdout__.flush()
    finally:
        os._exit(status)
