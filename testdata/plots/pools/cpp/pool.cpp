// C++ pool of the `plots` program (see ../../README.md): binomial
// coefficients, behind the resource template binom://{n}/{k}. Built by
// scripts/build-pools.sh into pool-cpp.out.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "nexus.hpp"

// n choose k, exactly; refuses what does not fit in 64 bits.
std::int64_t binomial(std::int64_t n, std::int64_t k) {
    if (n < 0 || k < 0 || k > n)
        throw std::invalid_argument("binomial(" + std::to_string(n) + ", " + std::to_string(k) + "): need 0 <= k <= n");
    if (k > n - k) k = n - k;
    unsigned __int128 r = 1;
    for (std::int64_t i = 1; i <= k; ++i) {
        r = r * static_cast<unsigned __int128>(n - k + i) / static_cast<unsigned __int128>(i);
        if (r > static_cast<unsigned __int128>(INT64_MAX))
            throw std::overflow_error("binomial(" + std::to_string(n) + ", " + std::to_string(k) + ") does not fit in 64 bits");
    }
    return static_cast<std::int64_t>(r);
}

int main() {
    nexus::Pool pool;
    pool.add(20, binomial);
    return pool.serve();
}
