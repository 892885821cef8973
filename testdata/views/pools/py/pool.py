"""Python pool of the `views` test program: results to look at.

One function per view nexus draws (docs/views.md): a series of numbers,
a list of records, a matrix, a record holding a record and a list, text,
an SVG image, a map, an optional, an error. Every answer is deterministic,
so that tests can count what a view draws.
"""

import base64
import math

import nexus

GROUPS = ["control", "treated", "treated-late"]


def series(n, period):
    """n samples of a sine of the given period, with a small fixed wobble."""
    if n < 0:
        raise ValueError("n must be at least 0, got %d" % n)
    return [round(math.sin(2 * math.pi * i / period) + 0.15 * math.sin(i * 1.7), 6) for i in range(n)]


def measurements(n):
    """n records: a sample name, its group, a value and whether it passed."""
    rows = []
    for i in range(n):
        value = round(10 + 3 * math.sin(i * 0.9) + (i % 3), 3)
        rows.append({"sample": "s%03d" % (i + 1), "group": GROUPS[i % 3], "value": value, "passed": value >= 10.5})
    return rows


def grid(rows, cols):
    """A rows x cols matrix of a smooth surface."""
    return [[round(math.sin(i / 3.0) * math.cos(j / 4.0), 4) for j in range(cols)] for i in range(rows)]


def summary(values):
    """Count, mean, range and quartiles of values."""
    if not values:
        raise ValueError("summary of an empty list")
    xs = sorted(values)

    def quantile(q):
        at = q * (len(xs) - 1)
        lo = int(math.floor(at))
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (at - lo)

    return {
        "n": len(xs),
        "mean": sum(xs) / len(xs),
        "range": {"min": xs[0], "max": xs[-1]},
        "quartiles": [quantile(0.25), quantile(0.5), quantile(0.75)],
    }


def describe(name):
    return "Sample %s\nCollected in the spring series.\nStored at -80 C; thawed once." % name


def sparkline(values):
    """An SVG polyline of values, base64 (the return's mime is image/svg+xml)."""
    if not values:
        values = [0.0]
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    w, h = 240, 48
    step = w / max(1, len(values) - 1)
    points = " ".join("%.1f,%.1f" % (i * step, h - 4 - (v - lo) / span * (h - 8)) for i, v in enumerate(values))
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">'
           '<rect width="100%%" height="100%%" fill="white"/>'
           '<polyline fill="none" stroke="#2563eb" stroke-width="2" points="%s"/></svg>') % (w, h, w, h, points)
    return base64.b64encode(svg.encode()).decode()


def word_counts(text):
    counts = {}
    for word in text.lower().split():
        word = word.strip(".,;:!?\"'()")
        if word:
            counts[word] = counts.get(word, 0) + 1
    return counts


def lookup(name):
    codes = {"control": 1, "treated": 2}
    return codes.get(name)


def fail(message):
    raise ValueError(message)


def version():
    return "views 1.0"


if __name__ == "__main__":
    nexus.serve({1: series, 2: measurements, 3: grid, 4: summary, 5: describe, 6: sparkline,
                 7: word_counts, 8: lookup, 9: fail, 10: version, 11: lambda n: series(n, 50.0)})
