"""Floor child of nexus-bench in Python: what a pool costs at the least.

It speaks the pool protocol's framing (a 4-byte big-endian length, then a
JSON object) on the descriptors NEXUS_POOL_IN and NEXUS_POOL_OUT, as the
Python runtime does, and nothing more: a call {"args":[a,b]} is answered
{"value":a+b}. A "json" message times json.loads + json.dumps of a file
here, so that the JSON floor does not include moving the bytes.
"""

import json
import os
import sys
import time


def main():
    reader = os.fdopen(int(os.environ["NEXUS_POOL_IN"]), "rb", buffering=1 << 16)
    out_fd = int(os.environ["NEXUS_POOL_OUT"])
    while True:
        head = reader.read(4)
        if len(head) < 4:
            return
        message = json.loads(reader.read(int.from_bytes(head, "big")))
        kind = message["type"]
        if kind == "call":
            a, b = message["args"]
            reply = {"type": "result", "id": message["id"], "value": a + b}
        elif kind == "json":
            with open(message["path"], "rb") as f:
                data = f.read()
            t0 = time.perf_counter()
            value = json.loads(data)
            t1 = time.perf_counter()
            text = json.dumps(value, separators=(",", ":"))
            t2 = time.perf_counter()
            reply = {"type": "json", "id": message["id"], "decode_ms": (t1 - t0) * 1e3,
                     "encode_ms": (t2 - t1) * 1e3, "same": text.encode() == data}
        else:
            return
        frame = json.dumps(reply, separators=(",", ":")).encode()
        frame = len(frame).to_bytes(4, "big") + frame
        while frame:
            frame = frame[os.write(out_fd, frame):]


if __name__ == "__main__":
    main()
    sys.exit(0)
