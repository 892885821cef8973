# A pool that runs one call at a time, in the order sent, the way a
# single-threaded runtime (R) does; it speaks the protocol by hand. Its
# argument says what its ready message claims: "false" sends
# "concurrent": false, "none" leaves the member out.
import json
import os
import struct
import subprocess
import sys
import time

claim = sys.argv[1]
fd_in = int(os.environ["NEXUS_POOL_IN"])
fd_out = int(os.environ["NEXUS_POOL_OUT"])
reader = os.fdopen(fd_in, "rb")


def send(obj):
    payload = json.dumps(obj).encode()
    os.write(fd_out, struct.pack(">I", len(payload)) + payload)


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
    header = reader.read(4)
    if len(header) < 4:
        sys.exit(0)
    (size,) = struct.unpack(">I", header)
    message = json.loads(reader.read(size))
    if message["type"] == "shutdown":
        sys.exit(0)
    if message["type"] != "call":
        continue
    value = table[message["mid"]](*message["args"])
    send({"type": "result", "id": message["id"], "value": value})
