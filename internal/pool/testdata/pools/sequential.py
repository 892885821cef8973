# A pool that runs one call at a time, in the order sent, the way a
# single-threaded runtime (R) does; it speaks the protocol by hand. Its
# argument says what its ready message claims: "false" sends
# "concurrent": false, "none" leaves the member out. A second argument, a
# directory, lets a test see and steer the order of events: block writes
# "blocking" there as it begins; the first process to start writes
# "first" and is ready at once; any later one (a replacement) writes
# "held.<pid>" and says it is ready only once "open" exists.
import os
import subprocess
import sys
import time

from handwire import receive, send

claim = sys.argv[1]
steer = sys.argv[2] if len(sys.argv) > 2 else None


def add_one(n):
    return n + 1


def block(seconds):
    if steer:
        open(os.path.join(steer, "blocking"), "w").close()
    time.sleep(seconds)  # deaf to cancel: one call at a time
    return seconds


def pid():
    return os.getpid()


def echo(x):
    return x


def spawn():
    """Starts a child; this pool does nothing for it when nexus dies."""
    return [os.getpid(), subprocess.Popen(["sleep", "60"]).pid]


if steer:
    try:
        os.close(os.open(os.path.join(steer, "first"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        open(os.path.join(steer, "held.%d" % os.getpid()), "w").close()
        while not os.path.exists(os.path.join(steer, "open")):
            time.sleep(0.01)

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
