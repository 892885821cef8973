def pySum(xs):
    return float(sum(xs))


def pyNormalize(xs):
    top = max(abs(x) for x in xs) if xs else 1.0
    return [x / top for x in xs] if top else list(xs)


def pyShout(s):
    return s.upper()


def pyEcho(xs):
    return xs
