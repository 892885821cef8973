def row_count(t):
    return len(t["x"])


def evens(n):
    xs = list(range(0, n, 2))
    return {"x": xs, "y": [str(x) for x in xs]}


def line_count(s):
    return len(s.splitlines())


def first_word(s):
    words = s.split()
    return words[0] if words else ""


def size_of(xs):
    return len(xs)
