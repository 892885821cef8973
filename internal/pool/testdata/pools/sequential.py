# A pool that runs one call at a time, in the order sent, the way a
# single-threaded runtime (R) does; it speaks the protocol by hand. Its
# argument says what its ready message claims: "false" sends
# "concurrent": false, "none" leaves the member out.
import os
import subprocess
import sys
import time

from handwire import receive, send

claim = sys.argv[1]


def add_one(n):
    return n + 1


def block(seconds):
    time.sleep(seconds)  # deaf to cancel: one call at a time
    return seconds


def pid():
    return os.getpid()


def echo(x):
    return x


def spawn():
    """Starts a child; this pool does nothing for it when nexus dies."""
    return [os.getpid(), subprocess.Popen(["sleep", "60"]).pid]


table = {1: add_one, 2: block, 3: pid, 4: echo, 5: spawn}
ready = {"type": "ready", "protocol": 1, "lang": "py", "pid": os.getpid(), "mids": sorted(table)}
if claim == "false":
    ready["concurrent"] = False
send(ready)
while True:
    message = receive()
    if message["type"] != "call":
        continue
    value = table[message["mid"]](*message["args"])
    send({"type": "result", "id": message["id"], "value": value})
