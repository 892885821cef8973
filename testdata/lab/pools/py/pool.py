"""Python pool of the `lab` test program: a program behind OAuth
(docs/auth.md). Some commands need scope lab:admin (metadata "scopes"), a
resource template and a computed prompt among them.

Every function first appends its name to the file $LAB_MARKER when it is
set: the e2e test reads it to show which calls reached the pool.
"""

import os

import nexus


def mark(name):
    path = os.environ.get("LAB_MARKER")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(name + "\n")


def add_int(x):
    mark("addInt")
    return x + 1


def purge():
    mark("purge")
    return "purged"


def sample(name):
    mark("sample")
    return f"sample {name}: 3 readings"


def review(name):
    mark("review")
    return f"Review sample {name} and say what stands out."


def square(x):
    mark("square")
    nexus.sleep(0.5)
    return x * x


DISPATCH = {
    201: add_int,
    202: purge,
    203: sample,
    204: review,
    205: square,
}

if __name__ == "__main__":
    nexus.serve(DISPATCH)
