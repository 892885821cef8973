#pragma once
#include <string>
#include <vector>

int cadd(int x, int y) { return x + y; }

std::string cbig(int n) { return std::string(n, 'y'); }

std::vector<double> creals(std::vector<double> xs) { return xs; }
