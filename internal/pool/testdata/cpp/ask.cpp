// The C++ ask test pool of internal/pool (ask_test.go): functions that put
// questions to the client; mids 1..8 as in testdata/pools/ask.py.
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "nexus.hpp"

using nexus::json;

static const char* empty_schema = R"({"type":"object","properties":{}})";  // a schema as JSON text

std::string greet() {
    json schema = {{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}, {"required", {"name"}}};
    json answer = nexus::elicit("What is your name?", schema);
    if (answer["action"] != "accept") return "no name (" + answer["action"].get<std::string>() + ")";
    return "Hello, " + answer["content"]["name"].get<std::string>() + "!";
}

std::string summarise(const std::string& text) { return nexus::sample("Summarise: " + text, 50, "Be brief."); }

std::string chat() {
    json messages = json::array({
        {{"role", "user"}, {"content", "hi"}},
        {{"role", "assistant"}, {"content", "hello"}},
        {{"role", "user"}, {"content", nexus::text("bye")}},
    });
    return nexus::sample(messages, 10);
}

std::vector<std::string> root_uris() {
    std::vector<std::string> uris;
    for (const json& root : nexus::roots()) uris.push_back(root["uri"].get<std::string>());
    return uris;
}

std::string caught() {
    try {
        nexus::elicit("Proceed?", empty_schema);
    } catch (const nexus::AskError& e) {
        return std::string("caught: ") + e.what();
    }
    return "no error";
}

std::string wait_cancel(const std::string& marker) {
    try {
        nexus::elicit("Wait for ever?", empty_schema);
    } catch (const nexus::Cancelled&) {
        std::ofstream(marker) << "cancelled";
        throw;
    }
    return "answered";
}

json elicit_raw() { return nexus::elicit("Anything?", empty_schema); }

// parallel: two threads of the call ask at once; each gets its own answer.
std::vector<std::string> parallel() {
    std::vector<std::string> names(2);
    std::vector<std::thread> threads;
    const char* messages[] = {"first", "second"};
    for (int i = 0; i < 2; ++i) {
        threads.emplace_back(nexus::within_call([&names, &messages, i] {
            names[i] = nexus::elicit(messages[i], empty_schema)["content"]["name"].get<std::string>();
        }));
    }
    for (auto& t : threads) t.join();
    return names;
}

int main() {
    nexus::Pool pool;
    pool.add(1, greet).add(2, summarise).add(3, chat).add(4, root_uris);
    pool.add(5, caught).add(6, wait_cancel).add(7, elicit_raw).add(8, parallel);
    return pool.serve();
}
