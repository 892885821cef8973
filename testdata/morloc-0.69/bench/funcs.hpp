#pragma once

#include <vector>

int addCpp(int x, int y) { return x + y; }

double divCpp(double x, double y) { return x / y; }

std::vector<double> echoCpp(const std::vector<double>& xs) { return xs; }

std::vector<double> scaleCpp(double k, const std::vector<double>& xs) {
    std::vector<double> ys(xs.size());
    for (size_t i = 0; i < xs.size(); i++) ys[i] = k * xs[i];
    return ys;
}
