package mcp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

func (st *taskStore) count() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.byID)
}

const aliceAnswer = `{"action":"accept","content":{"name":"Alice"}}`

// round1 calls tool with the extension declared and checks the reply is
// an MRTR input_required with no task, asking for key; it returns the
// requestState.
func round1(t *testing.T, srv *Server, tool, key string) string {
	t.Helper()
	before := srv.tasks.count()
	res := stateless(t, srv, context.Background(), "tools/call", `"name":"`+tool+`","arguments":{}`)
	reqs, _ := res["inputRequests"].(map[string]any)
	state, _ := res["requestState"].(string)
	if res["resultType"] != "input_required" || reqs[key] == nil || state == "" {
		t.Fatalf("%s: not an input_required result asking %s: %v", tool, key, res)
	}
	if _, ok := res["taskId"]; ok {
		t.Errorf("%s: an MRTR round carries a taskId: %v", tool, res)
	}
	if n := srv.tasks.count(); n != before {
		t.Errorf("%s: %d tasks after an input_required round, want %d as before it", tool, n, before)
	}
	return state
}

// retry is the retry with answers (key → result object) and state.
func retry(tool, answers, state string) string {
	return `"name":"` + tool + `","arguments":{},"inputResponses":` + answers + `,"requestState":"` + state + `"`
}

// createdTaskID checks that res is a flat CreateTaskResult with status
// and returns its task id.
func createdTaskID(t *testing.T, res map[string]any, status string) string {
	t.Helper()
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" || res["status"] != status || res["ttlMs"] == nil {
		t.Fatalf("not a CreateTaskResult with status %s: %v", status, res)
	}
	for _, k := range []string{"requestState", "inputRequests", "result", "error", "task"} {
		if _, ok := res[k]; ok {
			t.Errorf("CreateTaskResult carries %s: %v", k, res)
		}
	}
	return id
}

func taskText(t *testing.T, tk map[string]any) string {
	t.Helper()
	res, _ := tk["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no result content: %v", tk)
	}
	return content[0].(map[string]any)["text"].(string)
}

// The tasks-mrtr-composition flow: round 1 is input_required with no
// task, round 2 (the answer) becomes a task once the function has settled,
// the same run goes on inside it (not run again), and the task's result
// has the answer.
func TestTaskInputBefore(t *testing.T) {
	pool := newFakePool()
	srv := newComposeServer(t, pool)
	ctx := context.Background()
	state := round1(t, srv, "hello", "user_name")

	start := time.Now()
	res := stateless(t, srv, ctx, "tools/call", retry("hello", `{"user_name":`+aliceAnswer+`}`, state))
	if took := time.Since(start); took < composeSettle {
		t.Errorf("handed over after %v, before the settle time %v", took, composeSettle)
	}
	id := createdTaskID(t, res, "working")
	get := func() map[string]any { return stateless(t, srv, ctx, "tasks/get", `"taskId":"`+id+`"`) }
	if tk := get(); tk["status"] != "working" {
		t.Errorf("tasks/get before the function returned: %v", tk)
	}
	close(pool.release)
	done := waitStatus(t, get, "completed")
	if text := taskText(t, done); !strings.Contains(text, "Hello, Alice") {
		t.Errorf("the task's result: %q", text)
	}
	if n := pool.count("hello"); n != 2 {
		t.Errorf("the function ran %d times, want 2 (one per round; the task took the second over)", n)
	}
}

// A function that returns within the settle time is a task already
// completed; one that asks again makes another MRTR round with a new
// state; tampered state is a JSON-RPC error and leaves no task.
func TestTaskInputBeforeRounds(t *testing.T) {
	pool := newFakePool()
	srv := newComposeServer(t, pool)
	ctx := context.Background()

	state := round1(t, srv, "quick", "user_name")
	id := createdTaskID(t, stateless(t, srv, ctx, "tools/call", retry("quick", `{"user_name":`+aliceAnswer+`}`, state)), "completed")
	tk := stateless(t, srv, ctx, "tasks/get", `"taskId":"`+id+`"`)
	if tk["status"] != "completed" || !strings.Contains(taskText(t, tk), "Hello, Alice") {
		t.Errorf("the quick task: %v", tk)
	}

	state1 := round1(t, srv, "two", "first")
	res := stateless(t, srv, ctx, "tools/call", retry("two", `{"first":`+aliceAnswer+`}`, state1))
	state2, _ := res["requestState"].(string)
	if reqs, _ := res["inputRequests"].(map[string]any); res["resultType"] != "input_required" || reqs["second"] == nil || state2 == "" || state2 == state1 {
		t.Fatalf("round 2 of two questions: %v", res)
	}
	bob := strings.Replace(aliceAnswer, "Alice", "Bob", 1)
	id = createdTaskID(t, stateless(t, srv, ctx, "tools/call", retry("two", `{"second":`+bob+`}`, state2)), "completed")
	tk = stateless(t, srv, ctx, "tasks/get", `"taskId":"`+id+`"`)
	if text := taskText(t, tk); !strings.Contains(text, "Alice and Bob") {
		t.Errorf("the answers of both rounds: %q", text)
	}

	before := srv.tasks.count()
	for _, tt := range []struct{ name, params, want string }{
		{"tampered", retry("quick", `{"user_name":`+aliceAnswer+`}`, state+"x"), "integrity check"},
		{"another tool's", retry("quick", `{"user_name":`+aliceAnswer+`}`, state2), "made for tool 'two'"},
	} {
		got := statelessLine(t, srv, ctx, "tools/call", tt.params)
		if errorCode(t, got) != CodeInvalidParams || !strings.Contains(got, tt.want) {
			t.Errorf("%s state: %s", tt.name, got)
		}
	}
	if n := srv.tasks.count(); n != before {
		t.Errorf("a refused state left %d tasks, want %d", n, before)
	}
}

// A question asked after the handover goes to the task (input_required,
// tasks/update); the call's progress reaches the request's stream only
// until the handover.
func TestTaskInputBeforeLateQuestion(t *testing.T) {
	pool := newFakePool()
	srv := newComposeServer(t, pool)
	ctx := context.Background()
	rec := &recorder{}
	line := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask_late","arguments":{},"_meta":{"progressToken":"p",` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + extensionCaps + `}}}`
	id := createdTaskID(t, result(t, marshal(t, srv.HandleStateless(ctx, req(t, line), rec.notify))), "working")
	close(pool.release)
	get := func() map[string]any { return stateless(t, srv, ctx, "tasks/get", `"taskId":"`+id+`"`) }
	tk := waitStatus(t, get, "input_required")
	if reqs, _ := tk["inputRequests"].(map[string]any); reqs["confirm"] == nil {
		t.Fatalf("the late question: %v", tk)
	}
	stateless(t, srv, ctx, "tasks/update", `"taskId":"`+id+`","inputResponses":{"confirm":`+aliceAnswer+`}`)
	if text := taskText(t, waitStatus(t, get, "completed")); !strings.Contains(text, "late Alice") {
		t.Errorf("the late answer: %q", text)
	}
	notes := rec.all()
	if len(notes) != 1 || !strings.Contains(notes[0], `"progress":1`) {
		t.Errorf("the request's stream got %q, want the one progress before the handover", notes)
	}
}

// A request cancelled while its call is in the round stops the function
// and leaves no task.
func TestTaskInputBeforeCancelled(t *testing.T) {
	pool := newFakePool()
	srv := newComposeServer(t, pool)
	ctx, cancel := context.WithTimeout(context.Background(), composeSettle/4)
	defer cancel()
	got := statelessLine(t, srv, ctx, "tools/call", `"name":"ask_late","arguments":{}`)
	if strings.Contains(got, `"taskId"`) {
		t.Errorf("a cancelled round made a task: %s", got)
	}
	cancelled := pool.cancels()
	if cancelled != 1 || srv.tasks.count() != 0 {
		t.Errorf("after the cancelled round: %d cancellations (want 1), %d tasks (want 0)", cancelled, srv.tasks.count())
	}
}

// Where it does not apply the setting changes nothing: a "during" tool is
// a task from its first call; without the extension an optional tool is a
// plain MRTR call; in 2025-11-25 a call with params.task is a task at
// once, its question going to the client as a server request.
func TestTaskInputIgnored(t *testing.T) {
	pool := newFakePool()
	close(pool.release)
	srv := newComposeServer(t, pool)
	ctx := context.Background()

	id := createdTaskID(t, stateless(t, srv, ctx, "tools/call", `"name":"during","arguments":{}`), "working")
	tk := waitStatus(t, func() map[string]any { return stateless(t, srv, ctx, "tasks/get", `"taskId":"`+id+`"`) }, "input_required")
	if reqs, _ := tk["inputRequests"].(map[string]any); reqs["user_name"] == nil {
		t.Errorf("a during tool's question: %v", tk)
	}

	noExt := `{"elicitation":{}}`
	first := result(t, statelessWith(t, srv, ctx, noExt, "tools/call", `"name":"hello","arguments":{}`))
	if first["resultType"] != "input_required" {
		t.Fatalf("without the extension, round 1: %v", first)
	}
	second := result(t, statelessWith(t, srv, ctx, noExt, "tools/call", retry("hello", `{"user_name":`+aliceAnswer+`}`, first["requestState"].(string))))
	if second["resultType"] != "complete" || second["taskId"] != nil || !strings.Contains(fmt.Sprint(second["content"]), "Hello, Alice") {
		t.Errorf("without the extension, round 2 is the plain result: %v", second)
	}
	if got := statelessWith(t, srv, ctx, noExt, "tools/call", `"name":"quick","arguments":{}`); errorCode(t, got) != CodeMissingClientCapability {
		t.Errorf("a required tool without the extension: %s", got)
	}

	c := &fakeClient{answer: acceptName("Carol")}
	ss := initializedWith(t, srv, "2025-11-25", `{"elicitation":{}}`, c)
	tid := createTask(t, ss, "quick", `{}`)
	res := result(t, reply(t, ss, taskReq("tasks/result", tid)))
	if !strings.Contains(fmt.Sprint(res["content"]), "Hello, Carol") {
		t.Errorf("2025-11-25 task result: %v", res)
	}
	if got := reply(t, ss, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"quick","arguments":{}}}`); errorCode(t, got) != CodeMethodNotFound {
		t.Errorf("2025-11-25 required tool without params.task: %s", got)
	}
}
