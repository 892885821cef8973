"""A stand-in for a pool morloc compiled, speaking morloc's packet protocol
(one request per connection on a Unix socket), for the morloc driver's tests
that must run without morloc. argv: <socket> <tmpdir> <shm basename>.

Functions by mid: 1 answers the Int 42 (inline voidstar i4), 2 fails with a
message, 3 closes the connection without a reply (a worker that died),
4 sleeps a minute, 5 exits the whole pool, 6 answers the pool's pid after
0.3 s, 7 answers it at once, 8 fails as morloc 0.69's wedged allocator
does while reading arguments, the first time (then FAKE_WEDGE, a file,
exists), and answers its pid after. FAKE_REPORT names a file to
write the pool's argv, working directory and MORLOC_* variables to.
FAKE_PONG=bad answers pings with something else."""
import json
import os
import socket
import struct
import sys
import threading
import time

MAGIC = 0x0707F86D


def recvall(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def packet(command, payload):
    return struct.pack("<IHHHH", MAGIC, 0, 0, 0, 0) + command + struct.pack("<IQ", 0, len(payload)) + payload


def data(payload, fmt, status=0):
    return packet(bytes([0, 0, fmt, 0, 0, status, 0, 0]), payload)


def handle(conn):
    try:
        head = recvall(conn, 32)
        offset, length = struct.unpack("<IQ", head[20:32])
        recvall(conn, offset + length)
        if head[12] == 2:  # ping
            conn.sendall(b"x" * 32 if os.environ.get("FAKE_PONG") == "bad" else head)
            return
        mid = struct.unpack("<I", head[16:20])[0]
        if mid == 1:
            conn.sendall(data(struct.pack("<i", 42), 4))
        elif mid == 2:
            conn.sendall(data(b"Error (pool daemon in m2):\nno such thing", 2, status=1))
        elif mid == 3:
            pass  # closed with no reply
        elif mid == 4:
            time.sleep(60)
        elif mid == 5:
            print("exiting mid-call", file=sys.stderr, flush=True)
            os._exit(3)
        elif mid == 8 and not os.path.exists(os.environ.get("FAKE_WEDGE", "")):
            open(os.environ["FAKE_WEDGE"], "w").close()
            conn.sendall(data(b"Error C++ pool (pool.cpp:224 in _get_value):\nError (packet.c:382 in get_morloc_data_packet_value): \n"
                              b"Error (shm.c:701 in shmalloc_unlocked): Failed to allocate shared memory block of size 8:\n"
                              b"Error (shm.c:594 in find_free_block): Expected cursor to point to new block with reference count of 0, found count of 1", 2, status=1))
        elif mid in (6, 7, 8):
            if mid == 6:
                time.sleep(0.3)
            conn.sendall(data(struct.pack("<i", os.getpid()), 4))
    except EOFError:
        pass
    finally:
        conn.close()


def main():
    sock_path, tmpdir, basename = sys.argv[1:4]
    report = os.environ.get("FAKE_REPORT")
    if report:
        with open(report, "w") as f:
            env = {k: v for k, v in os.environ.items() if k.startswith("MORLOC_")}
            json.dump({"argv": sys.argv[1:], "cwd": os.getcwd(), "env": env}, f)
    print("fake pool starting", file=sys.stderr, flush=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(sock_path)
    server.listen(16)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


main()
