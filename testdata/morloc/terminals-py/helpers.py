def split_words(s):
    return s.split()


def join_comma(xs):
    return ",".join(xs)


def word_stats(xs):
    return {"words": len(xs), "longest": max((len(x) for x in xs), default=0)}
