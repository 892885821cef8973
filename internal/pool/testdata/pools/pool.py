# The test pool of internal/pool: one function per behaviour the tests drive.
import ctypes
import os
import signal
import subprocess
import sys
import time

import nexus


def add_one(n):
    return n + 1


def reverse(s):
    return s[::-1]


def fail(message):
    raise ValueError(message)


def wait_for(path, tag):
    """Returns tag once path exists; says it started through progress."""
    nexus.progress(0)
    while not os.path.exists(path):
        time.sleep(0.005)
    return tag


def sleep_until_cancelled(marker):
    """Busy in Python code until cancelled; records that it saw Cancelled."""
    try:
        nexus.progress(0)  # inside the try: the test cancels as soon as it sees this
        for _ in range(6000):
            time.sleep(0.005)
        return "never cancelled"
    except nexus.Cancelled:
        with open(marker, "w") as f:
            f.write("cancelled")
        raise


def nexus_sleep_until_cancelled(marker):
    """Blocked in nexus.sleep until cancelled; records what it saw."""
    try:
        nexus.progress(0)
        nexus.sleep(30)
        return "never cancelled"
    except nexus.Cancelled:
        with open(marker, "w") as f:
            f.write("cancelled=%s" % nexus.cancelled())
        raise


def die(message):
    print(message, file=sys.stderr)
    os._exit(3)


def die_on_cue(cue):
    """Exits with status 3 once cue exists; says it started through progress."""
    nexus.progress(0)
    while not os.path.exists(cue):
        time.sleep(0.005)
    die("the dice rolled off the table")


def count(n):
    for i in range(1, n + 1):
        nexus.progress(i, n, "step %d" % i)
    return n


def pid():
    return os.getpid()


def spawn_child():
    """Starts a grandchild of nexus and returns [pool pid, child pid]."""
    child = subprocess.Popen(["sleep", "60"])
    return [os.getpid(), child.pid]


def log_and_return(x):
    nexus.log("warning", {"got": x})
    return x


def not_json():
    return object()


def echo(*args):
    print("echo called with %d arguments" % len(args))  # must not break the protocol
    return list(args)


def png_signature():
    return b"\x89PNG\r\n\x1a\n"


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no")


def fail_unprintably():
    raise Unprintable()


def plot(caption):
    """An image and its caption as content blocks, with the caption's length as the value."""
    return nexus.Content([nexus.image(b"\x89PNG\r\n\x1a\n", "image/png"), nexus.text(caption)], value=len(caption))


def segfault():
    print("about to crash", file=sys.stderr)
    ctypes.string_at(0)  # reads address 0: a real SIGSEGV, in this thread
    os.kill(os.getpid(), signal.SIGSEGV)  # in case it did not
    time.sleep(10)


def slow_pid(seconds):
    time.sleep(seconds)
    return os.getpid()


nexus.serve({
    1: add_one,
    2: reverse,
    3: fail,
    4: wait_for,
    5: sleep_until_cancelled,
    6: nexus_sleep_until_cancelled,
    7: die,
    8: count,
    9: pid,
    10: spawn_child,
    11: log_and_return,
    12: not_json,
    13: echo,
    14: slow_pid,
    15: png_signature,
    16: fail_unprintably,
    17: plot,
    18: segfault,
    19: die_on_cue,
})
