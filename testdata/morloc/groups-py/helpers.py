def add_ints(x, y):
    return x + y


def scale(k, x):
    return k * x


def shout(quiet, s):
    return s.upper() if quiet else s.upper() + "!"


def repeat_word(n, w):
    return [w] * n
