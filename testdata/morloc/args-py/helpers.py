def word_count(text):
    return len(text.split())

def head_of(path, n):
    with open(path) as f:
        return [line.rstrip("\n") for _, line in zip(range(n), f)]

def save_to(path, text):
    with open(path, "x") as f:
        return f.write(text)

def byte_sum(xs):
    return sum(xs)

def mean_of(xs):
    return sum(xs) / len(xs) if xs else 0.0

def label_rows(rows):
    return [f"{i}:{s}" for i, s in rows]

def load_all(paths):
    total = 0
    for p in paths:
        with open(p, "rb") as f:
            total += len(f.read())
    return total

def count_tokens(xs):
    return len(xs)

def summarize(job):
    return f"{bytes(job['tag']).decode()}: {len(job['inputs'])} inputs, log {job['log']}"

def scale(k, xs):
    return [k * x for x in xs]
