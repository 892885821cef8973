def addPy(x, y):
    return x + y


def echoPy(xs):
    return xs
