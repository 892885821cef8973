def wordStats(text):
    words = text.split()
    return {"nwords": len(words), "longest": max(words, key=len) if words else ""}

def scale(factor, xs):
    return [factor * x for x in xs]

def shout(loud, times, word):
    w = word.upper() if loud else word
    return " ".join([w] * times)

def window(start, size, xs):
    return xs[start:start + size]

def maybeHalf(n):
    return n // 2 if n % 2 == 0 else None

def configure(c):
    return "dir=%s threads=%d verbose=%s" % (c["dir"], c["threads"], c["verbose"])
