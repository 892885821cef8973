# Python pool of the talkback program: functions that ask the client while
# they run (docs/pools.md, "Functions that talk back"). Mids 701..703.
import nexus

NAME_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Your name"}},
    "required": ["name"],
}


def greet():
    answer = nexus.elicit("What is your name?", NAME_SCHEMA)
    if answer["action"] != "accept":
        return "No name given (%s)" % answer["action"]
    return "Hello, %s!" % answer["content"]["name"]


def summarise(text):
    return nexus.sample("Summarise in one line:\n\n" + text, max_tokens=100, system="You write one-line summaries.")


def root_uris():
    return [root["uri"] for root in nexus.roots()]


nexus.serve({701: greet, 702: summarise, 703: root_uris})
