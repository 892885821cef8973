// C++ pool of the talkback program: functions that ask the client while
// they run (docs/pools.md, "Functions that talk back"). Mids 721..723.
// Built by scripts/build-pools.sh into pool-cpp.out.
#include <string>
#include <vector>

#include "nexus.hpp"

using nexus::json;

std::string greet() {
    json schema = {
        {"type", "object"},
        {"properties", {{"name", {{"type", "string"}, {"description", "Your name"}}}}},
        {"required", {"name"}},
    };
    json answer = nexus::elicit("What is your name?", schema);
    std::string action = answer["action"].get<std::string>();
    if (action != "accept") return "No name given (" + action + ")";
    return "Hello, " + answer["content"]["name"].get<std::string>() + "!";
}

std::string summarise(const std::string& text) {
    return nexus::sample("Summarise in one line:\n\n" + text, 100, "You write one-line summaries.");
}

std::vector<std::string> root_uris() {
    std::vector<std::string> uris;
    for (const json& root : nexus::roots()) uris.push_back(root["uri"].get<std::string>());
    return uris;
}

int main() {
    nexus::Pool pool;
    pool.add(721, greet).add(722, summarise).add(723, root_uris);
    return pool.serve();
}
