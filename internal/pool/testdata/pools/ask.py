# The ask test pool of internal/pool (ask_test.go): functions that put
# questions to the client through nexus.elicit, sample and roots. Mids 1..7
# are the same in testdata/r/ask.R and testdata/cpp/ask.cpp.
import threading

import nexus

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def greet():
    answer = nexus.elicit("What is your name?", NAME_SCHEMA)
    if answer["action"] != "accept":
        return "no name (%s)" % answer["action"]
    return "Hello, %s!" % answer["content"]["name"]


def summarise(text):
    return nexus.sample("Summarise: " + text, 50, "Be brief.")


def chat():
    return nexus.sample([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": {"type": "text", "text": "bye"}},
    ], max_tokens=10)


def root_uris():
    return [r["uri"] for r in nexus.roots()]


def caught():
    try:
        nexus.elicit("Proceed?", {"type": "object", "properties": {}})
    except nexus.AskError as err:
        return "caught: %s" % err
    return "no error"


def wait_cancel(marker):
    try:
        nexus.elicit("Wait for ever?", {"type": "object", "properties": {}})
    except nexus.Cancelled:
        with open(marker, "w") as f:
            f.write("cancelled")
        raise
    return "answered"


def elicit_raw():
    return nexus.elicit("Anything?", {"type": "object", "properties": {}})


def parallel():
    """Two threads of the call ask at once; each gets its own answer."""
    names = [None, None]

    def ask(i, message):
        names[i] = nexus.elicit(message, NAME_SCHEMA)["content"]["name"]

    threads = [threading.Thread(target=nexus.within_call(ask), args=(i, m)) for i, m in enumerate(["first", "second"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return names


def unbound_thread():
    """A thread the function starts without nexus.within_call has no call to ask for."""
    out = []

    def ask():
        try:
            nexus.roots()
        except nexus.AskError as err:
            out.append(str(err))

    t = threading.Thread(target=ask)
    t.start()
    t.join()
    return out[0]


def bad_kind():
    try:
        nexus._runtime._ask("bogus", {}, "test")
    except nexus.AskError as err:
        return str(err)
    return "no error"


nexus.serve({
    1: greet,
    2: summarise,
    3: chat,
    4: root_uris,
    5: caught,
    6: wait_cancel,
    7: elicit_raw,
    8: parallel,
    9: unbound_thread,
    10: bad_kind,
})
