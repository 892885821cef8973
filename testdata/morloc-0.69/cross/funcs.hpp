#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

std::vector<double> cppSquares(const std::vector<double>& xs) {
    std::vector<double> ys(xs.size());
    for (size_t i = 0; i < xs.size(); i++) ys[i] = xs[i] * xs[i];
    return ys;
}

std::vector<double> cppScale(double k, const std::vector<double>& xs) {
    std::vector<double> ys(xs.size());
    for (size_t i = 0; i < xs.size(); i++) ys[i] = k * xs[i];
    return ys;
}

std::string cppFail(const std::string& s) { throw std::runtime_error("C++ refused: " + s); }

std::vector<double> cppRange(int n) {
    std::vector<double> ys(n > 0 ? n : 0);
    for (int i = 0; i < n; i++) ys[i] = i;
    return ys;
}

std::vector<double> cppEcho(const std::vector<double>& xs) { return xs; }

double cppSleep(double seconds) {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    return seconds;
}
