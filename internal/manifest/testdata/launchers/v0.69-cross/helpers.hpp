#ifndef NEXUS_FIXTURE_CROSS_HPP
#define NEXUS_FIXTURE_CROSS_HPP

#include <vector>

std::vector<double> cppSquares(const std::vector<double>& xs) {
    std::vector<double> out;
    for (double x : xs) out.push_back(x * x);
    return out;
}

#endif
