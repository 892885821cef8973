// C++ pool of the scientific program: the values
// pools/py/pool.py and pools/r/pool.R return, as the standard containers
// C++ code returns them (std::array, std::deque, std::set,
// std::unordered_map), NaN and the infinities included.
#include "nexus.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

struct Point {
    double x;
    double y;
};
NEXUS_RECORD(Point, x, y)

struct Row {
    std::string name;
    std::optional<double> score;
};
NEXUS_RECORD(Row, name, score)

struct Cloud {
    std::vector<Point> points;
    std::optional<double> scale;
};
NEXUS_RECORD(Cloud, points, scale)

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

std::vector<double> doubled(std::vector<double> xs) {
    for (auto& x : xs) x *= 2;
    return xs;
}
std::int64_t count(const std::vector<double>& xs) { return static_cast<std::int64_t>(xs.size()); }
std::vector<std::vector<double>> eye(std::int64_t n) {
    std::vector<std::vector<double>> m(n, std::vector<double>(n, 0.0));
    for (std::int64_t i = 0; i < n; ++i) m[i][i] = 1;
    return m;
}
std::deque<double> one() { return {1.5}; }
double notANumber() { return nan; }
std::vector<double> specials() { return {1, inf, -inf, nan}; }
Point inRecord() { return {nan, -inf}; }
double idReal(double x) { return x; }
std::vector<double> ramp(std::int64_t n) {
    std::vector<double> v(n);
    for (std::int64_t i = 0; i < n; ++i) v[i] = 0.5 * i;
    if (n > 5) {
        v[3] = nan;
        v[5] = inf;
    }
    return v;
}
std::pair<std::string, int> pair() { return {"a", 1}; }
Point point() { return {1.5, -2}; }
std::set<std::string> tags() { return {"solo"}; }
std::deque<int> noInts() { return {}; }
std::vector<std::string> noStrs() { return {}; }
std::array<std::array<int, 3>, 2> grid() { return {{{1, 3, 5}, {2, 4, 6}}}; }
std::vector<Row> rows() { return {{"a", 0.5}, {"b", std::nullopt}}; }
std::vector<std::string> levels() { return {"lo", "hi", "lo"}; }
std::optional<std::int64_t> missing() { return std::nullopt; }
std::unordered_map<std::string, int> tally() { return {{"a", 2}}; }  // one key: an unordered_map has no order to compare
std::set<int> uniq() { return {3, 1, 3, 2}; }
std::array<std::uint16_t, 3> triple() { return {7, 8, 9}; }
std::vector<Point> inRecords() { return {{nan, 1.5}, {inf, -inf}}; }
Cloud inCloud() { return {{{nan, 0.5}, {1, inf}}, nan}; }
Point swap(Point p) { return {p.y, p.x}; }

}  // namespace

int main() {
    nexus::Pool pool;
    pool.add(3001, doubled).add(3002, count).add(3003, eye).add(3004, one).add(3005, notANumber);
    pool.add(3006, specials).add(3007, inRecord).add(3008, idReal).add(3009, ramp).add(3010, pair);
    pool.add(3011, point).add(3012, tags).add(3013, noInts).add(3014, noStrs).add(3015, grid);
    pool.add(3016, rows).add(3017, levels).add(3018, missing).add(3019, tally).add(3020, uniq);
    pool.add(3021, triple).add(3031, inRecords).add(3032, inCloud).add(3033, swap);
    return pool.serve();
}
