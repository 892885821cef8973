import os
import time


def add(x, y):
    return x + y


def neg(x):
    return -x


def fail(msg):
    raise ValueError(msg)


def hang(secs):
    time.sleep(secs)
    return 0


def pid(x):
    return os.getpid()


def echo(s):
    return s


def big(n):
    return "x" * n


def maybe(x):
    return None if x < 0 else x


def stats(s):
    ws = s.split()
    return {
        "nwords": len(ws),
        "longest": max(ws, key=len) if ws else "",
        "mean": sum(len(w) for w in ws) / len(ws) if ws else 0.0,
        "words": ws,
    }


def total(xs):
    return sum(xs)


def seq(k, n):
    # n Ints that say which call made them: k*n, k*n+1, ...
    return list(range(k * n, k * n + n))
