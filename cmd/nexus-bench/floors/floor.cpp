// Floor child of nexus-bench in C++: what a pool costs at the least. It
// speaks the pool protocol's framing (a 4-byte big-endian length, then a
// JSON object) on the descriptors NEXUS_POOL_IN and NEXUS_POOL_OUT with
// read(2) and write(2), as the C++ runtime does, and nothing more: a call
// {"args":[a,b]} is answered {"value":a+b}. A "json" message times
// nlohmann::json::parse + dump() of a file here, so that the JSON floor
// does not include moving the bytes. Run with --exit it exits at once
// (the start-up floor).
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

using nlohmann::json;

static bool read_all(int fd, char* p, size_t n) {
    while (n > 0) {
        ssize_t r = ::read(fd, p, n);
        if (r <= 0) return false;
        p += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

static void write_all(int fd, const char* p, size_t n) {
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w <= 0) std::exit(1);
        p += w;
        n -= static_cast<size_t>(w);
    }
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "--exit") == 0) return 0;
    const char* in = std::getenv("NEXUS_POOL_IN");
    const char* out = std::getenv("NEXUS_POOL_OUT");
    if (!in || !out) return 2;
    int in_fd = std::atoi(in), out_fd = std::atoi(out);
    std::string payload, frame;
    for (;;) {
        unsigned char head[4];
        if (!read_all(in_fd, reinterpret_cast<char*>(head), 4)) return 0;
        uint32_t n = (uint32_t(head[0]) << 24) | (uint32_t(head[1]) << 16) | (uint32_t(head[2]) << 8) | head[3];
        payload.resize(n);
        if (!read_all(in_fd, payload.data(), n)) return 0;
        json message = json::parse(payload);
        json reply;
        if (message["type"] == "call") {
            reply = {{"type", "result"}, {"id", message["id"]},
                     {"value", message["args"][0].get<int64_t>() + message["args"][1].get<int64_t>()}};
        } else if (message["type"] == "json") {
            std::ifstream f(message["path"].get<std::string>(), std::ios::binary);
            std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
            using clock = std::chrono::steady_clock;
            auto t0 = clock::now();
            json value = json::parse(data);
            auto t1 = clock::now();
            std::string text = value.dump();
            auto t2 = clock::now();
            auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
            reply = {{"type", "json"}, {"id", message["id"]}, {"decode_ms", ms(t1 - t0)},
                     {"encode_ms", ms(t2 - t1)}, {"same", text == data}};
        } else {
            return 0;
        }
        std::string body = reply.dump();
        uint32_t len = static_cast<uint32_t>(body.size());
        frame.assign({char(len >> 24), char(len >> 16), char(len >> 8), char(len)});
        frame += body;
        write_all(out_fd, frame.data(), frame.size());
    }
}
