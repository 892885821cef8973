"""Python pool of the `everything` program: the fixture tools the official MCP
conformance suite (@modelcontextprotocol/conformance) calls by name, plus
`slow_count` for nexus's own HTTP tests. See ../../README.md.
"""

import io
import json
import struct
import threading
import time
import wave
import zlib

import nexus


def _png_red_pixel():
    """A valid 1x1 red PNG, built here so the fixture ships no binary file."""

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte, then red
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def _wav_beep():
    """A 50 ms, 8 kHz, 8-bit mono WAV of a square wave."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(8000)
        w.writeframes(bytes(200 if (i // 10) % 2 else 56 for i in range(400)))
    return out.getvalue()


PNG = _png_red_pixel()
WAV = _wav_beep()


def test_simple_text():
    text = "This is a simple text response for testing."
    return nexus.Content([nexus.text(text)], value=text)


def test_image_content():
    return PNG  # the manifest's return mime (image/png) makes it an image block


def test_audio_content():
    return WAV  # return mime audio/wav


def test_embedded_resource():
    return nexus.Content([nexus.resource("This is an embedded resource content.", "text/plain", "test://embedded-resource")])


def test_multiple_content_types():
    return nexus.Content([
        nexus.text("Multiple content types test:"),
        nexus.image(PNG, "image/png"),
        nexus.resource('{"test":"data","value":123}', "application/json", "test://mixed-content-resource"),
    ])


def test_error_handling():
    raise RuntimeError("This tool intentionally returns an error for testing")


def test_tool_with_progress():
    for done in (0, 50, 100):
        nexus.progress(done, 100)
        if done < 100:
            nexus.sleep(0.05)
    return "progress reported: 0, 50, 100 of 100"


def test_tool_with_logging():
    nexus.log("info", "Tool execution started")
    nexus.sleep(0.05)
    nexus.log("info", "Tool processing data")
    nexus.sleep(0.05)
    nexus.log("info", "Tool execution completed")
    return "logged three messages"


def test_missing_capability():
    return "the client declared the sampling capability"


def test_logging_tool():
    nexus.log("info", "test_logging_tool ran")
    return "logged one message"


def json_schema_2020_12_tool(name, address, contact_method, phone, email):
    how = contact_method or ("phone" if phone else "email")
    where = phone if how == "phone" else email
    return "%s: by %s at %s" % (name, how, where)


def slow_count(steps, ms):
    for i in range(1, steps + 1):
        nexus.sleep(ms / 1000.0)
        nexus.progress(i, steps, "step %d" % i)
    return steps


def cancel_probe(marker):
    # A test that must cancel it while it runs waits for this file.
    with open(marker + ".started", "w"):
        pass
    steps = 0
    try:
        while steps < 1200:
            nexus.sleep(0.05)
            steps += 1
            nexus.progress(steps)
    except nexus.Cancelled:
        with open(marker, "w") as f:
            f.write("cancelled after %d steps\n" % steps)
        raise
    return steps


# --- Functions that talk back: the conformance suite's fixtures.
# Each asks through nexus.elicit / nexus.sample / nexus.roots; nexus sends
# the question as a server request (handshake era) or ends the call with
# input_required and runs the function again with the answers (2026-07-28).
# key= names a question as the suite expects to find it in inputRequests.

_NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
_CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def _compact(value):
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def test_sampling(prompt):
    return "LLM response: " + nexus.sample(prompt, max_tokens=100)


def test_elicitation(message):
    answer = nexus.elicit(message, {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    })
    return "User response: action=%s, content=%s" % (answer["action"], _compact(answer.get("content")))


def test_elicitation_sep1034_defaults():
    answer = nexus.elicit("Please review and update the form fields with defaults", {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
        "required": [],
    })
    return "Elicitation completed: action=%s, content=%s" % (answer["action"], _compact(answer.get("content")))


def test_elicitation_sep1330_enums():
    answer = nexus.elicit("Please select options from the enum fields", {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Choose an option",
                               "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Choose a titled option", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"}]},
            "legacyEnum": {"type": "string", "description": "Choose a legacy option",
                           "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Choose multiple options",
                              "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Choose multiple titled options", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"}]}},
        },
        "required": [],
    })
    return "Elicitation completed: action=%s, content=%s" % (answer["action"], _compact(answer.get("content")))


def test_input_required_result_elicitation():
    answer = nexus.elicit("What is your name?", _NAME, key="user_name")
    return "Hello, %s!" % (answer.get("content") or {}).get("name", answer["action"])


def test_input_required_result_sampling():
    return "The model says: " + nexus.sample("What is the capital of France?", max_tokens=100, key="capital_question")


def test_input_required_result_list_roots():
    roots = nexus.roots(key="client_roots")
    return "Roots: " + ", ".join(r["uri"] for r in roots)


def test_input_required_result_request_state():
    answer = nexus.elicit("Please confirm", _CONFIRM, key="confirm")
    return "state-ok: the requestState was verified; confirmed=%s" % (answer.get("content") or {}).get("ok")


def test_input_required_result_multiple_inputs():
    # Three questions at once, from three threads: they go out in one round.
    out = {}

    def ask(name, fn):
        out[name] = fn()

    jobs = [
        threading.Thread(target=nexus.within_call(ask), args=("name", lambda: nexus.elicit("What is your name?", _NAME, key="user_name"))),
        threading.Thread(target=nexus.within_call(ask), args=("greeting", lambda: nexus.sample("Generate a greeting", max_tokens=50, key="greeting"))),
        threading.Thread(target=nexus.within_call(ask), args=("roots", lambda: nexus.roots(key="client_roots"))),
    ]
    for j in jobs:
        j.start()
    for j in jobs:
        j.join()
    if len(out) != 3:
        raise RuntimeError("a question went unanswered")
    return "%s; %s; %d roots" % ((out["name"].get("content") or {}).get("name"), out["greeting"], len(out["roots"]))


def test_input_required_result_multi_round():
    step1 = nexus.elicit("Step 1: What is your name?", _NAME, key="step1")
    name = (step1.get("content") or {}).get("name")
    step2 = nexus.elicit("Step 2: What is your favorite color?", {
        "type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}, key="step2")
    return "%s likes %s" % (name, (step2.get("content") or {}).get("color"))


def test_input_required_result_tampered_state():
    answer = nexus.elicit("Please confirm", _CONFIRM, key="confirm")
    return "confirmed=%s" % (answer.get("content") or {}).get("ok")


def test_input_required_result_capabilities():
    # Only what the client declared is asked: without elicitation the first
    # question fails at once, and the function asks the model alone.
    try:
        name = (nexus.elicit("What is your name?", _NAME, key="user_name").get("content") or {}).get("name")
    except nexus.AskError as e:
        name = "(no elicitation: %s)" % e
    return "%s; %s" % (name, nexus.sample("Say hello", max_tokens=20, key="hello"))


def test_streaming_elicitation():
    answer = nexus.elicit("Pick a value while the call runs", {
        "type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}, key="value")
    return "value=%s" % (answer.get("content") or {}).get("value")


def test_template_data(id):
    # Behind the resource template test://template/{id}/data: the record
    # is the resource's contents, as JSON.
    return {"id": id, "templateTest": True, "data": "Data for ID: %s" % id}


def test_input_required_result_prompt():
    # A prompt that asks the user first: in 2026-07-28 prompts/get answers
    # input_required (key user_context), and the retry brings the answer.
    answer = nexus.elicit("What context should the prompt use?", {
        "type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}, key="user_context")
    context = (answer.get("content") or {}).get("context", "(none given)")
    return "Prompt with context: %s" % context


if __name__ == "__main__":
    nexus.serve({
        1: test_simple_text,
        2: test_image_content,
        3: test_audio_content,
        4: test_embedded_resource,
        5: test_multiple_content_types,
        6: test_error_handling,
        7: test_tool_with_progress,
        8: test_tool_with_logging,
        9: test_missing_capability,
        10: test_logging_tool,
        11: json_schema_2020_12_tool,
        12: slow_count,
        13: cancel_probe,
        14: test_template_data,
        15: test_input_required_result_prompt,
        40: test_sampling,
        41: test_elicitation,
        42: test_elicitation_sep1034_defaults,
        43: test_elicitation_sep1330_enums,
        44: test_input_required_result_elicitation,
        45: test_input_required_result_sampling,
        46: test_input_required_result_list_roots,
        47: test_input_required_result_request_state,
        48: test_input_required_result_multiple_inputs,
        49: test_input_required_result_multi_round,
        50: test_input_required_result_tampered_state,
        51: test_input_required_result_capabilities,
        52: test_streaming_elicitation,
    })
