# A pool that speaks a protocol version this nexus does not know.
import json
import os
import struct

payload = json.dumps({"type": "ready", "protocol": 3}).encode()
os.write(int(os.environ["NEXUS_POOL_OUT"]), struct.pack(">I", len(payload)) + payload)
os.read(int(os.environ["NEXUS_POOL_IN"]), 1)
