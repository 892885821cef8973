"""Python pool of the `unruly` test program: functions that misbehave."""

import ctypes
import os
import signal
import subprocess
import sys
import time

import nexus


def ok(n):
    return n + 1


def slow(ms):
    nexus.sleep(ms / 1000)
    return ms


def fail(message):
    raise ValueError(message)


def crash(status):
    print("crashing with status %d" % status, file=sys.stderr)
    os._exit(status)


def segfault():
    print("about to read address 0", file=sys.stderr)
    ctypes.string_at(0)
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(10)


def hang():
    time.sleep(3600)  # a C call: nexus's cancel reaches it only when it returns
    return 0


def spawn():
    return subprocess.Popen(["sleep", "300"]).pid


def pid():
    return os.getpid()


def block(seconds):
    time.sleep(seconds)
    return seconds


def echo(text):
    return text


def spawn_and_wait():
    return subprocess.call(["sleep", "300"])


def plot(caption):
    png = b"\x89PNG\r\n\x1a\n"
    return nexus.Content([nexus.image(png, "image/png"), nexus.text(caption)], value=len(caption))


nexus.serve({
    1: ok,
    2: slow,
    3: fail,
    4: crash,
    5: segfault,
    6: hang,
    7: spawn,
    8: pid,
    9: block,
    10: echo,
    11: spawn_and_wait,
    12: plot,
})
