#pragma once

#include <vector>

int addCpp(int x, int y) { return x + y; }

std::vector<double> echoCpp(const std::vector<double>& xs) { return xs; }
