# A pool that speaks the ask messages by hand, so that ask_test.go sees the
# answer frames exactly as nexus writes them. Each call sends a first ask
# for a call id that is not in flight (nexus must ignore it), then its real
# asks, and returns the answers it got, as they came.
import os

from handwire import receive, send

# mid -> the asks its calls send: (kind, params); params None leaves the member out
asks = {
    1: [("roots", None)],
    2: [("elicit", {"message": "m", "requestedSchema": {"type": "object"}})],
    3: [("bogus", {})],
}
send({"type": "ready", "protocol": 2, "lang": "py", "pid": os.getpid(), "mids": sorted(asks), "concurrent": False})
while True:
    message = receive()
    if message["type"] != "call":
        continue
    call_id = message["id"]
    send({"type": "ask", "id": call_id + 1000, "ask": 1, "kind": "roots", "params": {}})
    for n, (kind, params) in enumerate(asks[message["mid"]], start=1):
        ask = {"type": "ask", "id": call_id, "ask": n, "kind": kind}
        if params is not None:
            ask["params"] = params
        send(ask)
    answers = []
    while len(answers) < len(asks[message["mid"]]):
        m = receive()
        if m["type"] == "answer":
            answers.append(m)
    send({"type": "result", "id": call_id, "value": answers})
