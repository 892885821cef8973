// The numeric example program's C++ pool: plain functions, one
// registration line each (testdata/README.md lists them).
#include "nexus.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

struct Stats {
    double mean;
    double min;
    double max;
};
NEXUS_RECORD(Stats, mean, min, max)

double mean(const std::vector<double>& xs) {
    if (xs.empty()) throw std::invalid_argument("mean of an empty list");
    double sum = 0;
    for (double x : xs) sum += x;
    return sum / static_cast<double>(xs.size());
}

double dot(const std::vector<double>& xs, const std::vector<double>& ys) {
    if (xs.size() != ys.size())
        throw std::invalid_argument("the vectors have " + std::to_string(xs.size()) + " and " +
                                    std::to_string(ys.size()) + " elements");
    double sum = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) sum += xs[i] * ys[i];
    return sum;
}

std::int64_t factorial(std::int64_t n) {
    if (n < 0) throw std::domain_error("factorial of a negative number: " + std::to_string(n));
    if (n > 20) throw std::overflow_error(std::to_string(n) + "! does not fit in 64 bits (20! is the largest that does)");
    std::int64_t product = 1;
    for (std::int64_t i = 2; i <= n; ++i) product *= i;
    return product;
}

Stats stats(const std::vector<double>& xs) {
    double m = mean(xs);  // rejects an empty list
    auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
    return {m, *lo, *hi};
}

std::vector<double> clampAll(std::vector<double> xs, double lo, double hi) {
    if (lo > hi) {
        std::ostringstream message;
        message << "lo " << lo << " is above hi " << hi;
        throw std::invalid_argument(message.str());
    }
    for (double& x : xs) x = std::clamp(x, lo, hi);
    return xs;
}

// slowCount counts to n, a tenth of a second a step, reporting progress and
// stopping as soon as nexus cancels the call.
std::int64_t slowCount(std::int64_t n) {
    for (std::int64_t i = 1; i <= n; ++i) {
        if (nexus::cancelled()) throw nexus::Cancelled{};
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        nexus::progress(static_cast<double>(i), static_cast<double>(n), "counted " + std::to_string(i));
    }
    return n;
}

int crash() {
    std::fprintf(stderr, "crash: writing through a null pointer\n");
    *(volatile int*)nullptr = 1;
    return 0;
}

std::string chatty() {
    std::cout << "from-cpp-cout" << std::endl;
    std::printf("from-cpp-printf\n");
    std::system("echo from-cpp-child");
    return "done";
}

int main() {
    nexus::Pool pool;
    pool.add(201, mean);
    pool.add(202, dot);
    pool.add(203, factorial);
    pool.add(204, stats);
    pool.add(205, clampAll);
    pool.add(206, slowCount);
    pool.add(207, crash);
    pool.add(208, chatty);
    return pool.serve();
}
