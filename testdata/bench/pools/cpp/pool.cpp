// C++ pool of the bench program (mids 21..24): the functions `make bench`
// (cmd/nexus-bench) measures nexus with, as pools/py/pool.py and
// pools/r/pool.R have them, with one registration line each.
#include "nexus.hpp"

#include <chrono>
#include <cstdint>
#include <vector>

std::int64_t add(std::int64_t a, std::int64_t b) { return a + b; }

// Not `sleep`: that name is POSIX's sleep(3).
std::int64_t sleepMs(std::int64_t ms) {
    nexus::sleep_for(std::chrono::milliseconds(ms)); // wakes when the call is cancelled
    return ms;
}

std::vector<std::int64_t> echo(std::vector<std::int64_t> xs) { return xs; }

std::vector<std::vector<double>> echoMatrix(std::vector<std::vector<double>> m) { return m; }

int main() {
    nexus::Pool pool;
    pool.add(21, add).add(22, sleepMs).add(23, echo).add(24, echoMatrix);
    return pool.serve();
}
