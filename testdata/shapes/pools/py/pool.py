"""Python pool of the `shapes` test program: one function per argument shape.

Each function receives one plain JSON value per manifest argument, in order
(records and Map Str X as dicts, tuples and lists as lists) and returns a plain
value. The dispatch table at the bottom maps manifest mids to functions.
"""

import os
import sys

import nexus


def no_args():
    return "no arguments needed"


def add_int(x):
    return x + 1


def halve_real(x):
    return x / 2


def shout(words):
    return words.upper() + "!"


def negate(value):
    return not value


def sum_many(xs):
    return sum(xs)


def maybe_double(x):
    return None if x is None else 2 * x


def scale(x, factor):
    return x * factor


def greet(greeting, who):
    return f"{greeting}, {who}!"


def verbose(flag):
    return flag


def configure(cfg):
    clean = "true" if cfg["removeCaches"] else "false"
    return f"tmpDir={cfg['tmpDir']} numThreads={cfg['numThreads']} removeCaches={clean}"


def configure_whole(cfg):
    return dict(cfg)


def swap_pair(pair):
    first, second = pair
    return [second, first]


def map_size(mapping):
    # len() counts a dict's keys and a list of pairs alike.
    return len(mapping)


def person(name, age):
    return {"name": name, "age": age}


def fail(text):
    raise ValueError("boom: " + text)


def chatty():
    # Both writes must land on nexus's stderr, never on the MCP stream.
    print("chatty: print() from the pool")
    sys.stdout.flush()
    os.system("echo from-child")
    return "done"


def sleep_ms(ms):
    # nexus.sleep wakes up when the call is cancelled; time.sleep would not.
    nexus.sleep(ms / 1000)
    return ms


def echo(text):
    return text


def progress_steps(steps):
    for done in range(1, steps + 1):
        nexus.progress(done, steps, f"step {done} of {steps}")
        nexus.log("info", {"step": done, "of": steps})
    return steps


def render_lines(text):
    return text.splitlines()


def render_lines_upper(text):
    return "\n".join(line.upper() for line in text.splitlines())


def render_lines_count(text):
    return len(text.splitlines())


def read_stdin(text):
    return len(text)


def table_sum(table):
    # Column-oriented ({"x": [...], ...}) or a list of row objects.
    if isinstance(table, dict):
        return sum(table["x"])
    return sum(row["x"] for row in table)


def open_file(path):
    # A file handle crosses the boundary as its path.
    return path


def name_clash(word, count):
    return " ".join([word] * count)


DISPATCH = {
    101: no_args,
    102: add_int,
    103: halve_real,
    104: shout,
    105: negate,
    106: sum_many,
    107: maybe_double,
    108: scale,
    109: greet,
    110: verbose,
    111: configure,
    112: configure_whole,
    113: swap_pair,
    114: map_size,
    115: person,
    116: fail,
    117: chatty,
    118: sleep_ms,
    119: echo,
    120: progress_steps,
    121: render_lines,
    122: render_lines_upper,
    123: render_lines_count,
    124: read_stdin,
    125: table_sum,
    126: open_file,
    127: name_clash,
}

if __name__ == "__main__":
    nexus.serve(DISPATCH)
