import time


def addPy(x, y):
    return x + y


def divPy(x, y):
    return x / y


def echoPy(xs):
    return xs


def sleepPy(seconds):
    time.sleep(seconds)
    return seconds


def rangePy(n, start):
    return list(range(start, start + n))
