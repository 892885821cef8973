// C++ pool of the fidelity program: the functions pools/py/pool.py and
// pools/r/pool.R implement too (mids 501..528), as plain C++ with one
// registration line each. Int is int64_t: exact over 64 bits, and a value
// beyond them is refused by the runtime before the function runs.
#include "nexus.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

struct Person {
    std::string name;
    std::int64_t age;
};
NEXUS_RECORD(Person, name, age)

struct Team {
    std::string name;
    std::vector<Person> members;
};
NEXUS_RECORD(Team, name, members)

using Map = std::map<std::string, std::int64_t>;

std::int64_t add(std::int64_t a, std::int64_t b) {
    std::int64_t sum;
    if (__builtin_add_overflow(a, b, &sum)) throw std::overflow_error("the sum does not fit in 64 bits");
    return sum;
}

std::int64_t idInt(std::int64_t x) { return x; }
std::int64_t negInt(std::int64_t x) {
    if (x == std::numeric_limits<std::int64_t>::min()) throw std::overflow_error("-(-2^63) does not fit in 64 bits");
    return -x;
}
double idReal(double x) { return x; }
double halfReal(double x) { return x / 2; }
std::string idStr(std::string s) { return s; }
// Code points: every byte that does not continue a UTF-8 sequence.
std::int64_t strLen(const std::string& s) {
    std::int64_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}
std::string exclaim(const std::string& s) { return s + "!"; }
bool idBool(bool b) { return b; }
bool notBool(bool b) { return !b; }
std::vector<std::int64_t> idInts(std::vector<std::int64_t> xs) { return xs; }
std::int64_t sumInts(const std::vector<std::int64_t>& xs) {
    std::int64_t total = 0;
    for (auto x : xs) total = add(total, x);
    return total;
}
std::vector<double> idReals(std::vector<double> xs) { return xs; }
double sumReals(const std::vector<double>& xs) {
    double total = 0;
    for (double x : xs) total += x;
    return total;
}
std::tuple<std::int64_t, std::string> swapPair(const std::tuple<std::string, std::int64_t>& pair) {
    return {std::get<1>(pair), std::get<0>(pair)};
}
std::tuple<std::int64_t, double, std::string, bool> idTuple(std::tuple<std::int64_t, double, std::string, bool> t) { return t; }
Person idPerson(Person p) { return p; }
Person birthday(Person p) {
    p.age = add(p.age, 1);
    return p;
}
std::optional<std::int64_t> idMaybe(std::optional<std::int64_t> x) { return x; }
std::optional<std::int64_t> maybeInc(std::optional<std::int64_t> x) {
    if (!x) return std::nullopt;
    return add(*x, 1);
}
Map idMap(Map m) { return m; }
std::int64_t mapTotal(const Map& m) {
    std::int64_t total = 0;
    for (const auto& [key, value] : m) total = add(total, value);
    return total;
}
Map mapInc(Map m) {
    for (auto& [key, value] : m) value = add(value, 1);
    return m;
}
Team idTeam(Team team) { return team; }
std::vector<std::int64_t> teamAges(const Team& team) {
    std::vector<std::int64_t> ages;
    for (const auto& member : team.members) ages.push_back(member.age);
    return ages;
}
std::string fail(const std::string& text) { throw std::runtime_error("boom: " + text); }
std::string chatty() {
    // All three writes must reach nexus's stderr, never the MCP stream.
    std::cout << "from-cpp-cout" << std::endl;
    std::printf("from-cpp-printf\n");
    std::system("echo from-cpp-child");
    return "done";
}
// Wrong on purpose: nexus checks every result against its declared type.
// claimsInt is registered under a mid whose manifest type is Int.
std::string claimsInt() { return "seven"; }
// A raw JSON object, passed through: a Person without its age.
nexus::json claimsRecord() { return nexus::json{{"name", "Ada"}}; }

int main() {
    nexus::Pool pool;
    pool.add(501, idInt).add(502, negInt).add(503, idReal).add(504, halfReal);
    pool.add(505, idStr).add(506, strLen).add(507, exclaim).add(508, idBool).add(509, notBool);
    pool.add(510, idInts).add(511, sumInts).add(512, idReals).add(513, sumReals);
    pool.add(514, swapPair).add(515, idTuple).add(516, idPerson).add(517, birthday);
    pool.add(518, idMaybe).add(519, maybeInc).add(520, idMap).add(521, mapTotal).add(522, mapInc);
    pool.add(523, idTeam).add(524, teamAges).add(525, fail).add(526, chatty);
    pool.add(527, claimsInt).add(528, claimsRecord);
    return pool.serve();
}
