import os
import time


def addInt(x, y):
    return x + y


def scale(k, xs):
    return [k * x for x in xs]


def greet(name):
    return "hello, " + name + "!"


def isEven(n):
    return n % 2 == 0


def pairUp(n, s):
    return (n, s)


def older(years, p):
    return {"name": p["name"], "age": p["age"] + years, "height": p["height"]}


def safeHead(xs):
    return xs[0] if xs else None


def cohorts(people):
    groups = {}
    for p in people:
        groups.setdefault(p["age"] // 10, []).append(p)
    return [groups[k] for k in sorted(groups)]


def fail(msg):
    raise ValueError("refused: " + msg)


def die(code):
    os._exit(3)


def bigText(n):
    return "x" * n


def echoReals(xs):
    return xs


def sleepFor(seconds):
    time.sleep(seconds)
    return seconds
