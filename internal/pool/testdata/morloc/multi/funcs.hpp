#pragma once
#include <string>

int cadd(int x, int y) { return x + y; }

std::string cbig(int n) { return std::string(n, 'y'); }
