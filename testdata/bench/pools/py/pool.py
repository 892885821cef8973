"""Python pool of the `bench` program (mids 1..4): the functions `make bench`
(cmd/nexus-bench) measures nexus with. pools/r/pool.R and pools/cpp/pool.cpp
are the same functions in R and C++.

They do as little as possible, so that what the benchmark measures is
nexus and the runtime, not the function.
"""

import nexus


def add(a, b):
    return a + b


def sleep(ms):
    nexus.sleep(ms / 1000)  # cancellable, unlike time.sleep
    return ms


def echo(xs):
    return xs


def echo_matrix(m):
    return m


if __name__ == "__main__":
    nexus.serve({1: add, 2: sleep, 3: echo, 4: echo_matrix})
