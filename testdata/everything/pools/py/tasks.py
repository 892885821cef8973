"""Python pool of the `everything` program's task fixtures: the tools the
official MCP conformance suite's tasks scenarios (SEP-2663, "pending")
call by name, written as user functions are. They live in a pool of their
own so that protocol_error_job, which kills its pool, leaves the other
fixtures running. See ../../README.md.
"""

import os
from concurrent.futures import ThreadPoolExecutor

import nexus


def greet(name):
    text = "Hello, %s!" % name
    return nexus.Content([nexus.text(text)], value=text)  # the bare text, not a JSON string


def slow_compute(seconds, label):
    # nexus.sleep wakes at once when the call is cancelled (tasks/cancel).
    nexus.sleep(seconds)
    return "%s: computed after %s s" % (label, seconds)


def failing_job():
    nexus.sleep(1)
    raise RuntimeError("failing_job failed, as it always does")


def protocol_error_job():
    # Not a tool error but the pool failing under the call: a task whose
    # status is "failed", with a JSON-RPC error.
    os._exit(70)


CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean", "description": "Delete it?"}}, "required": ["confirm"]}


def confirm_delete(filename):
    answer = nexus.elicit("Delete %s?" % filename, CONFIRM)
    if answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm"):
        return "deleted %s" % filename
    return "kept %s" % filename


def multi_input():
    # Two questions at once: both are pending together.
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}}}
    ask = nexus.within_call(lambda i: nexus.elicit("Question %d of 2" % i, schema))
    with ThreadPoolExecutor(2) as ex:
        answers = list(ex.map(ask, (1, 2)))
    return ", ".join(str((a.get("content") or {}).get("name")) for a in answers)


def test_tool_with_task():
    # "taskInput": "before" in the manifest: this question is an MRTR
    # round (input_required, no task yet); the call becomes a task once
    # it has its answer and runs on.
    answer = nexus.elicit("What is your name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}, key="user_name")
    name = (answer.get("content") or {}).get("name", "nobody")
    nexus.sleep(0.5)
    return "Hello, %s, from a task" % name


if __name__ == "__main__":
    nexus.serve({
        101: greet,
        102: slow_compute,
        103: failing_job,
        104: protocol_error_job,
        105: confirm_delete,
        106: multi_input,
        107: test_tool_with_task,
    })
