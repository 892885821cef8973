def pyParse(s):
    return [float(w) for w in s.split()]

def pyRange(xs):
    return max(xs) - min(xs) if xs else 0.0
