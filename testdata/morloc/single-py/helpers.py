def join_words(sep, upper, words):
    text = sep.join(words)
    return text.upper() if upper else text
