#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

struct person_t {
    std::string name;
    int age;
    double height;
    std::optional<std::string> nick;
};

struct inner_t {
    bool a;
    bool b;
};

struct flags_t {
    bool on;
    inner_t inner;
    int n;
    std::optional<double> maybe;
    bool last;
};

template <typename T>
T echo(T x) { return x; }

std::string bigStr(int n) {
    std::string s;
    for (int i = 0; i < n; i++) s.push_back('a' + i % 26);
    return s;
}

std::vector<double> bigReals(int n) {
    std::vector<double> xs;
    for (int i = 0; i < n; i++) xs.push_back(i * 0.5 - 3.25);
    return xs;
}

std::vector<int> bigInts(int n) {
    std::vector<int> xs;
    for (int i = 0; i < n; i++) xs.push_back(i * 7 - 1000);
    return xs;
}

std::vector<person_t> bigPeople(int n) {
    std::vector<person_t> xs;
    for (int i = 0; i < n; i++) {
        person_t p;
        p.name = "p" + std::to_string(i);
        p.age = i;
        p.height = 1.5 + i / 1000.0;
        if (i % 3 != 0) p.nick = "n" + std::to_string(i);
        xs.push_back(p);
    }
    return xs;
}

int boom(int n) {
    throw std::runtime_error("boom " + std::to_string(n));
}
