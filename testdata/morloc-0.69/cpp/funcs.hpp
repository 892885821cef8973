#pragma once

#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

struct person_t {
    std::string name;
    int age;
    double height;
};

int addInt(int x, int y) { return x + y; }

std::vector<double> scale(double k, const std::vector<double>& xs) {
    std::vector<double> ys(xs.size());
    for (size_t i = 0; i < xs.size(); i++) ys[i] = k * xs[i];
    return ys;
}

std::string greet(const std::string& name) { return "hello, " + name + "!"; }

bool isEven(int n) { return n % 2 == 0; }

std::tuple<int, std::string> pairUp(int n, const std::string& s) { return {n, s}; }

person_t older(int years, person_t p) {
    p.age += years;
    return p;
}

std::optional<int> safeHead(const std::vector<int>& xs) {
    if (xs.empty()) return std::nullopt;
    return xs[0];
}

std::vector<std::vector<person_t>> cohorts(const std::vector<person_t>& people) {
    std::map<int, std::vector<person_t>> groups;
    for (const auto& p : people) groups[p.age / 10].push_back(p);
    std::vector<std::vector<person_t>> out;
    for (auto& kv : groups) out.push_back(kv.second);
    return out;
}

std::string fail(const std::string& msg) { throw std::runtime_error("refused: " + msg); }

int die(int code) { std::_Exit(3); }

std::string bigText(int n) { return std::string(n, 'x'); }

std::vector<double> echoReals(const std::vector<double>& xs) { return xs; }

double sleepFor(double seconds) {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    return seconds;
}
