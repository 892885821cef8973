"""Python pool of the json-help program (morloc's golden test of the same name).

One function per exported command, plus the two internal entries behind
fileHead's output projections. Arguments arrive one plain JSON value per
manifest argument: the SysConfig record and the Map Str Int as dicts.
"""

import nexus


def sum_many(numbers):
    total = 0
    for n in numbers:
        total += n
    return total


def configure(config):
    clean = "yes" if config["removeCaches"] else "no"
    return "tmpDir=%s threads=%d clean=%s" % (config["tmpDir"], config["numThreads"], clean)


def count_words(tokens):
    return sum(len(token.split()) for token in tokens)


def map_size(mapping):
    return len(mapping)


def file_head(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines()


def file_head_lines(path):
    # A CLI renderer: prints to stdout, which nexus sends to stderr in MCP mode.
    for line in file_head(path):
        print(line)
    return None


def file_head_sum(path):
    return ";".join(file_head(path))


if __name__ == "__main__":
    nexus.serve({
        1: sum_many,
        2: configure,
        3: count_words,
        4: map_size,
        5: file_head,
        8: file_head_lines,
        9: file_head_sum,
    })
