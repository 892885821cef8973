// The floor that cpp_bench_test.go measures runtime/cpp/nexus.hpp against:
// a pool protocol loop with nothing but nlohmann/json. It reads a frame,
// parses it, answers mid 1 (add two integers) or mid 2 (echo the first
// argument) and writes the reply; no threads, no conversion.
//
// Run as `bare floor FILE N`, it parses and dumps the JSON in FILE N times
// and prints the CPU time of one parse + dump in microseconds: nlohmann's
// own cost for a payload, with no pipe at all.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

using json = nlohmann::json;

static bool read_full(int fd, char* p, std::size_t n) {
    while (n > 0) {
        ssize_t r = ::read(fd, p, n);
        if (r <= 0) return false;
        p += r;
        n -= std::size_t(r);
    }
    return true;
}

static void write_frame(int fd, const std::string& payload) {
    std::string frame(4, '\0');
    auto n = static_cast<std::uint32_t>(payload.size());
    frame[0] = char(n >> 24);
    frame[1] = char(n >> 16);
    frame[2] = char(n >> 8);
    frame[3] = char(n);
    frame += payload;
    const char* p = frame.data();
    std::size_t left = frame.size();
    while (left > 0) {
        ssize_t w = ::write(fd, p, left);
        if (w <= 0) std::exit(0);
        p += w;
        left -= std::size_t(w);
    }
}

static double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[1]) == "floor") {
        std::ifstream in(argv[2], std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        std::string text = ss.str();
        int n = std::atoi(argv[3]);
        std::size_t sink = 0;
        double start = cpu_seconds();
        for (int i = 0; i < n; ++i) sink += json::parse(text).dump().size();
        double took = cpu_seconds() - start;
        std::printf("%.1f %zu\n", took / n * 1e6, sink / std::size_t(n));
        return 0;
    }
    write_frame(4, json{{"type", "ready"}, {"protocol", 1}, {"lang", "cpp"}, {"mids", {1, 2}}, {"concurrent", false}}.dump());
    std::string buf;
    for (;;) {
        unsigned char h[4];
        if (!read_full(3, reinterpret_cast<char*>(h), 4)) return 0;
        std::size_t n = std::size_t(h[0]) << 24 | std::size_t(h[1]) << 16 | std::size_t(h[2]) << 8 | h[3];
        buf.resize(n);
        if (!read_full(3, buf.data(), n)) return 0;
        json m = json::parse(buf);
        if (m["type"] == "shutdown") return 0;
        if (m["type"] != "call") continue;
        json& args = m["args"];
        json value = m["mid"] == 1 ? json(args[0].get<std::int64_t>() + args[1].get<std::int64_t>()) : std::move(args[0]);
        json reply = {{"type", "result"}, {"id", m["id"]}};
        reply["value"] = std::move(value);
        write_frame(4, reply.dump());
    }
}
