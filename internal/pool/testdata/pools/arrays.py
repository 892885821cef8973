# The test pool for protocol 2's arrays and for the Python runtime's worker
# threads (internal/pool/arrays_test.go, runtime_python_test.go).
import os
import threading
import time

import nexus

nexus._runtime._IDLE_SECONDS = 0.5  # spare worker threads retire fast, so tests can watch them go


def describe(*args):
    """The arguments exactly as the function sees them: repr tells 1 from 1.0 and lists from tuples."""
    return repr(args)


def echo(x):
    return x


def make(kind, n):
    """A result of n numbers (or about) of a kind, for the ret tests."""
    if kind == "ints":
        return [i * 7 - 1000 for i in range(n)]
    if kind == "int64 edges":
        return [-(2 ** 63), 2 ** 63 - 1] + list(range(n - 2))
    if kind == "reals":
        return [i / 8 - 3.0 for i in range(n)]
    if kind == "ints as reals":
        return list(range(n))
    if kind == "matrix":
        return [[r * 10.5 + c for c in range(n)] for r in range(3)]
    if kind == "int cube":
        return [[[a * 100 + b * 10 + c for c in range(n)] for b in range(2)] for a in range(3)]
    if kind == "tuple rows":
        return [tuple(range(n)) for _ in range(2)]
    if kind == "ragged":
        return [list(range(n)), list(range(n + 1))]
    if kind == "huge":
        return list(range(n)) + [2 ** 64]
    if kind == "floats":
        return [float(i) for i in range(n)]
    if kind == "bool":
        return list(range(n)) + [True]
    if kind == "nan":
        return [0.5] * n + [float("nan")]
    if kind == "inf":
        return [0.5] * n + [float("-inf")]
    if kind == "short":
        return list(range(3))
    if kind == "not a list":
        return n
    raise ValueError("no kind %r" % kind)


def threads():
    """How many OS threads this process has: the reader, plus its workers."""
    return len(os.listdir("/proc/self/task"))


def sleep_ms(ms):
    time.sleep(ms / 1000)
    return ms


_arrived = threading.Condition()
_count = [0]


def gather(n):
    """Returns once n calls of gather are running at the same time."""
    with _arrived:
        _count[0] += 1
        _arrived.notify_all()
        if not _arrived.wait_for(lambda: _count[0] >= n, timeout=20):
            return "only %d of %d calls ran at once" % (_count[0], n)
    return "together"


def busy(kind, ms):
    """Something a cancel can land in: Python code, nexus.sleep or a C call."""
    end = time.monotonic() + ms / 1000
    if kind == "python":
        x = 0
        while time.monotonic() < end:
            x += 1
    elif kind == "nexus.sleep":
        nexus.sleep(ms / 1000)
    else:
        time.sleep(ms / 1000)
    return kind


def state(x):
    """What a fresh call sees on a reused thread: itself as the current call
    (its log record carries its id; no progress, which it did not ask for),
    and not cancelled."""
    nexus.progress(1)
    nexus.log("info", x)
    return [x, nexus.cancelled()]


nexus.serve({
    1: describe,
    2: echo,
    3: make,
    4: threads,
    5: sleep_ms,
    6: gather,
    7: busy,
    8: state,
})
