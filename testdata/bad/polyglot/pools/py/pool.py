"""Python pool of the polyglot test program: ok, slow, fail, crash, spawn."""

import os
import subprocess
import sys
import time

import nexus


def ok(n):
    return n + 1


def slow(ms):
    nexus.sleep(ms / 1000)
    return ms


def fail(text):
    raise ValueError("boom: " + text)


def crash(status):
    print("crashing with status %d" % status, file=sys.stderr)
    os._exit(status)


def spawn():
    return subprocess.Popen(["sleep", "300"]).pid


def block(seconds):
    time.sleep(seconds)  # a C call: cancel reaches it only when it returns
    return seconds


nexus.serve({1: ok, 2: slow, 3: fail, 4: crash, 5: spawn, 6: block})
