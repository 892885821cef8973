#pragma once
#include <chrono>
#include <string>
#include <thread>
#include <vector>

int cadd(int x, int y) { return x + y; }

std::string cbig(int n) { return std::string(n, 'y'); }

std::vector<double> creals(std::vector<double> xs) { return xs; }

std::vector<int> cseq(int k, int n) {
    std::vector<int> xs(n);
    for (int i = 0; i < n; i++) xs[i] = k * n + i;
    return xs;
}

int chang(double secs) {
    std::this_thread::sleep_for(std::chrono::duration<double>(secs));
    return 0;
}
