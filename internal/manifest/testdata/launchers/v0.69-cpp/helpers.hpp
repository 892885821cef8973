#ifndef NEXUS_FIXTURE_CPP_HPP
#define NEXUS_FIXTURE_CPP_HPP

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

struct summary_t {
    double mean;
    double min;
    double max;
};

double mean(const std::vector<double>& xs) {
    double s = 0;
    for (double x : xs) s += x;
    return xs.empty() ? 0 : s / xs.size();
}

std::vector<double> clampAll(double lo, double hi, const std::vector<double>& xs) {
    std::vector<double> out;
    for (double x : xs) out.push_back(std::min(hi, std::max(lo, x)));
    return out;
}

summary_t stats(const std::vector<double>& xs) {
    summary_t s{mean(xs), xs.empty() ? 0 : xs[0], xs.empty() ? 0 : xs[0]};
    for (double x : xs) { s.min = std::min(s.min, x); s.max = std::max(s.max, x); }
    return s;
}

int factorial(int n) {
    int r = 1;
    for (int i = 2; i <= n; i++) r *= i;
    return r;
}

std::vector<std::tuple<std::string, int>> counts(const std::vector<std::string>& words) {
    std::vector<std::tuple<std::string, int>> out;
    for (const auto& w : words) {
        auto it = std::find_if(out.begin(), out.end(), [&](const auto& t) { return std::get<0>(t) == w; });
        if (it == out.end()) out.emplace_back(w, 1); else std::get<1>(*it)++;
    }
    return out;
}

#endif
