"""Python pool of the `everything` program: the fixture tools the official MCP
conformance suite (@modelcontextprotocol/conformance) calls by name, plus
`slow_count` for nexus's own HTTP tests. See ../../README.md.
"""

import io
import struct
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
    })
