// C++ pool of the polyglot test program: ok, slow, fail, crash, spawn.
#include "nexus.hpp"

#include <spawn.h>
#include <sys/types.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

extern char** environ;

long long ok(long long n) { return n + 1; }

long long slow(long long ms) {
    nexus::sleep_for(std::chrono::milliseconds(ms));
    return ms;
}

std::string fail(const std::string& text) { throw std::runtime_error("boom: " + text); }

long long crash(long long status) {
    std::fprintf(stderr, "crashing with status %lld\n", status);
    std::fflush(stderr);
    std::_Exit(static_cast<int>(status));
}

long long spawn() {
    pid_t pid = 0;
    char sleep[] = "sleep", seconds[] = "300";
    char* argv[] = {sleep, seconds, nullptr};
    if (int err = posix_spawnp(&pid, "sleep", nullptr, nullptr, argv, environ); err != 0)
        throw std::runtime_error("cannot start sleep: " + std::to_string(err));
    return pid;
}

long long block(long long seconds) {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));  // deaf to cancel
    return seconds;
}

int main() {
    nexus::Pool pool;
    pool.add(1, ok).add(2, slow).add(3, fail).add(4, crash).add(5, spawn).add(6, block);
    return pool.serve();
}
