# The pool protocol's frames written by hand, for the test pools that speak
# it without the nexus runtime (askwire.py, sequential.py): each frame is a
# 4-byte big-endian length and a JSON message.
import json
import os
import struct
import sys

_out = int(os.environ["NEXUS_POOL_OUT"])
_reader = os.fdopen(int(os.environ["NEXUS_POOL_IN"]), "rb")


def send(obj):
    payload = json.dumps(obj).encode()
    os.write(_out, struct.pack(">I", len(payload)) + payload)


def receive():
    """The next message; the pool exits at end of file or on shutdown."""
    header = _reader.read(4)
    if len(header) < 4:
        sys.exit(0)
    (size,) = struct.unpack(">I", header)
    message = json.loads(_reader.read(size))
    if message["type"] == "shutdown":
        sys.exit(0)
    return message
