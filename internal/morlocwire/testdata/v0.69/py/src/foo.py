def echo(x):
    return x

def bigStr(n):
    return "".join(chr(ord("a") + i % 26) for i in range(n))

def bigReals(n):
    return [i * 0.5 - 3.25 for i in range(n)]

def bigInts(n):
    return [i * 7 - 1000 for i in range(n)]

def bigPeople(n):
    return [{"name": "p%d" % i, "age": i, "height": 1.5 + i / 1000.0, "nick": None if i % 3 == 0 else "n%d" % i} for i in range(n)]

def boom(n):
    raise ValueError("boom %d" % n)
