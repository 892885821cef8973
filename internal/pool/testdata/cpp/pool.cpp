// The C++ test pool of internal/pool/cpp_test.go: one function per
// conversion and runtime feature of runtime/cpp/nexus.hpp. The mids here
// and in cpp_test.go must agree.
#include "nexus.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace shapes {

struct Person {
    std::string name;
    int age;
};
NEXUS_RECORD(Person, name, age)

struct Team {
    std::string name;
    std::vector<Person> members;
    std::optional<Person> lead;
    std::map<std::string, double> scores;
};
NEXUS_RECORD(Team, name, members, lead, scores)

}  // namespace shapes

struct Sample {
    double value;
    float weight;
    std::int8_t level;
};
NEXUS_RECORD(Sample, value, weight, level)

// Series holds arrays inside a record: nexus sends them at nested paths.
struct Series {
    std::string name;
    std::vector<double> values;
    std::vector<std::vector<std::int64_t>> counts;
};
NEXUS_RECORD(Series, name, values, counts)

namespace {

std::int64_t addOne(std::int64_t x) { return x + 1; }
std::uint64_t echoU64(std::uint64_t x) { return x; }
std::int8_t echoI8(std::int8_t x) { return x; }
std::uint16_t echoU16(std::uint16_t x) { return x; }
int echoInt(int x) { return x; }
double echoDouble(double x) { return x; }
float echoFloat(float x) { return x; }
std::string shout(const std::string& s) { return s + "!"; }
bool negate(bool b) { return !b; }

std::int64_t sumVec(const std::vector<std::int64_t>& xs) {
    std::int64_t sum = 0;
    for (auto x : xs) sum += x;
    return sum;
}

std::vector<std::string> reverseStrings(std::vector<std::string> xs) { return {xs.rbegin(), xs.rend()}; }
std::vector<std::vector<int>> echoMatrix(std::vector<std::vector<int>> m) { return m; }
std::tuple<int, std::string> swapPair(std::tuple<std::string, int> t) { return {std::get<1>(t), std::get<0>(t)}; }
std::pair<bool, double> echoPair(std::pair<bool, double> p) { return p; }
std::array<int, 3> rotate3(std::array<int, 3> a) { return {a[1], a[2], a[0]}; }

std::optional<int> maybeDouble(std::optional<int> x) {
    if (!x) return std::nullopt;
    return *x * 2;
}

std::map<std::string, int> doubleValues(std::map<std::string, int> m) {
    for (auto& entry : m) entry.second *= 2;
    return m;
}

std::map<int, std::string> intKeys(const std::unordered_map<int, std::string>& m) { return {m.begin(), m.end()}; }

shapes::Person older(shapes::Person p) {
    p.age += 1;
    return p;
}

shapes::Team echoTeam(const shapes::Team& t) { return t; }
Sample echoSample(Sample s) { return s; }

std::string fail(const std::string& what) { throw std::invalid_argument("boom: " + what); }
int failOther() { throw 42; }

// waitCancel and sleepMs record how they ended (lastEvent reports it), as
// nexus never sees the reply of a cancelled call. Both report progress 0
// first, so that a test knows the call has started.
std::mutex lastEventMu;
std::string lastEventText = "none";

long long millisSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}

void record(const std::string& event) {
    std::lock_guard<std::mutex> lock(lastEventMu);
    lastEventText = event;
}

std::string lastEvent() {
    std::lock_guard<std::mutex> lock(lastEventMu);
    return lastEventText;
}

// waitCancel polls nexus::cancelled() for up to ms milliseconds.
std::string waitCancel(int ms) {
    nexus::progress(0);
    auto start = std::chrono::steady_clock::now();
    auto deadline = start + std::chrono::milliseconds(ms);
    std::string how = "timeout";
    while (std::chrono::steady_clock::now() < deadline) {
        if (nexus::cancelled()) {
            how = "cancelled";
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::string event = "wait " + how + " after " + std::to_string(millisSince(start)) + "ms";
    record(event);
    return event;
}

// sleepMs sleeps with nexus::sleep_for, which throws nexus::Cancelled.
int sleepMs(int ms) {
    nexus::progress(0);
    auto start = std::chrono::steady_clock::now();
    try {
        nexus::sleep_for(std::chrono::milliseconds(ms));
    } catch (const nexus::Cancelled&) {
        record("sleep cancelled after " + std::to_string(millisSince(start)) + "ms");
        throw;
    }
    return ms;
}

int progressSteps(int n) {
    for (int i = 1; i <= n; ++i) {
        nexus::progress(i, n, "step " + std::to_string(i) + " of " + std::to_string(n));
        nexus::log("info", std::map<std::string, int>{{"step", i}});
    }
    return n;
}

int crash() {
    std::fprintf(stderr, "about to crash\n");
    *(volatile int*)nullptr = 1;
    return 0;
}

double notANumber() { return std::numeric_limits<double>::quiet_NaN(); }
std::string badUtf8() { return "ok \xff"; }

std::string chatty() {
    std::cout << "from cout" << std::endl;
    std::printf("from printf\n");
    std::system("echo from-cpp-child");
    return "done";
}

void nothing() {}

nexus::Bytes reverseBytes(nexus::Bytes b) { return nexus::Bytes(std::string(b.data.rbegin(), b.data.rend())); }
nlohmann::json wrapJson(const nlohmann::json& j) { return nlohmann::json{{"got", j}}; }
int pid() { return static_cast<int>(::getpid()); }

// fdsInherited reports whether a child of the pool can see descriptors 3 and 4.
std::string fdsInherited() {
    int status = std::system("test -e /proc/self/fd/3 || test -e /proc/self/fd/4");
    return status == 0 ? "inherited" : "closed";
}

nexus::Content plot(int n) {
    return nexus::Content({nexus::text("a plot of " + std::to_string(n)), nexus::image(nexus::Bytes("\x89PNG"), "image/png"),
                           nexus::resource("x,y", "text/csv", "data:points"), nexus::resource(nexus::Bytes("\x01"), "application/octet-stream", "data:raw")},
                          std::vector<int>(static_cast<std::size_t>(n), 1));
}

nexus::Content blocksOnly() { return nexus::Content({nexus::audio(std::string("RIFF"), "audio/wav")}); }

std::int64_t addInts(std::int64_t a, std::int64_t b) { return a + b; }

// The echoes give back what they got: a call with arrays must give the
// same answer as the same call in JSON.
std::vector<std::int64_t> echoI64s(std::vector<std::int64_t> xs) { return xs; }
std::vector<int> echoInts(const std::vector<int>& xs) { return xs; }
std::vector<double> echoDoubles(std::vector<double> xs) { return xs; }
std::vector<float> echoFloats(std::vector<float> xs) { return xs; }
std::vector<std::vector<double>> echoGrid(std::vector<std::vector<double>> m) { return m; }
std::vector<std::vector<std::int64_t>> echoIntGrid(std::vector<std::vector<std::int64_t>>&& m) { return std::move(m); }
Series echoSeries(Series s) { return s; }
std::vector<std::uint64_t> echoU64s(std::vector<std::uint64_t> xs) { return xs; }
std::vector<std::vector<std::vector<int>>> echoCube(std::vector<std::vector<std::vector<int>>> c) { return c; }
std::vector<bool> echoBools(std::vector<bool> xs) { return xs; }
std::optional<std::vector<double>> echoMaybeDoubles(std::optional<std::vector<double>> xs) { return xs; }

// mixArgs takes arrays beside other arguments.
std::tuple<std::vector<double>, int, std::vector<std::int64_t>> mixArgs(std::vector<double> a, int k, std::vector<std::int64_t> b) {
    return {a, k, b};
}

// makeGrid returns rows x cols integers, the last row one short when ragged.
std::vector<std::vector<std::int64_t>> makeGrid(int rows, int cols, bool ragged) {
    std::vector<std::vector<std::int64_t>> m(static_cast<std::size_t>(rows));
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols - (ragged && i == rows - 1 ? 1 : 0); ++j) m[std::size_t(i)].push_back(std::int64_t(i) * cols + j - 7);
    return m;
}

// withNonFinite returns n halves with element n/2 replaced by "nan", "inf"
// or "-inf" (anything else: none).
std::vector<double> withNonFinite(int n, const std::string& what) {
    std::vector<double> xs;
    for (int i = 0; i < n; ++i) xs.push_back(i * 0.5 - 3);
    double bad = what == "nan" ? std::numeric_limits<double>::quiet_NaN()
               : what == "inf" ? std::numeric_limits<double>::infinity()
               : what == "-inf" ? -std::numeric_limits<double>::infinity()
               : 0.25;
    if (n > 0) xs[std::size_t(n / 2)] = bad;
    return xs;
}

// threadCount is the number of threads of the pool process.
int threadCount() {
    int n = 0;
    if (DIR* d = opendir("/proc/self/task")) {
        while (dirent* e = readdir(d))
            if (e->d_name[0] != '.') ++n;
        closedir(d);
    }
    return n;
}

// meet returns n once n calls are inside it at once, or -1 after 30 s
// without: calls that run one after another never meet.
int meet(int n) {
    static std::mutex mu;
    static std::condition_variable cv;
    static int inside = 0;
    static long generation = 0;
    std::unique_lock<std::mutex> lock(mu);
    long mine = generation;
    if (++inside == n) {
        inside = 0;
        ++generation;
        cv.notify_all();
        return n;
    }
    if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return generation != mine; })) {
        --inside;
        return -1;
    }
    return n;
}

}  // namespace

int main() {
    int offset = 1000;  // a lambda's captures work
    std::function<int(int, int)> add = [](int a, int b) { return a + b; };
    nexus::Pool pool;
    pool.add(1, addOne)
        .add(2, echoU64)
        .add(3, echoI8)
        .add(4, echoU16)
        .add(5, echoInt)
        .add(6, echoDouble)
        .add(7, echoFloat)
        .add(8, shout)
        .add(9, negate)
        .add(10, sumVec)
        .add(11, reverseStrings)
        .add(12, echoMatrix)
        .add(13, swapPair)
        .add(14, echoPair)
        .add(15, rotate3)
        .add(16, maybeDouble)
        .add(17, doubleValues)
        .add(18, intKeys)
        .add(19, older)
        .add(20, echoTeam)
        .add(21, echoSample)
        .add(22, fail)
        .add(23, failOther)
        .add(24, waitCancel)
        .add(25, lastEvent)
        .add(26, sleepMs)
        .add(27, progressSteps)
        .add(28, crash)
        .add(29, notANumber)
        .add(30, badUtf8)
        .add(31, chatty)
        .add(32, nothing)
        .add(33, reverseBytes)
        .add(34, wrapJson)
        .add(35, pid)
        .add(36, [offset](int x) { return x + offset; })
        .add(37, add)
        .add(38, fdsInherited)
        .add(39, plot)
        .add(40, blocksOnly)
        .add(41, addInts)
        .add(42, echoI64s)
        .add(43, echoInts)
        .add(44, echoDoubles)
        .add(45, echoFloats)
        .add(46, echoGrid)
        .add(47, echoIntGrid)
        .add(48, echoSeries)
        .add(49, echoU64s)
        .add(50, echoCube)
        .add(51, echoBools)
        .add(52, echoMaybeDoubles)
        .add(53, mixArgs)
        .add(54, makeGrid)
        .add(55, withNonFinite)
        .add(56, threadCount)
        .add(57, meet);
    return pool.serve();
}
