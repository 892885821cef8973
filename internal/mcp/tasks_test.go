package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// decode parses a reply line into a map.
func decode(t *testing.T, line string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not JSON: %q", line)
	}
	return m
}

// result returns a reply's result, failing on an error reply.
func result(t *testing.T, line string) map[string]any {
	t.Helper()
	m := decode(t, line)
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %s", line)
	}
	return res
}

// errorCode returns a reply's error code, 0 for a result.
func errorCode(t *testing.T, line string) int {
	t.Helper()
	if e, ok := decode(t, line)["error"].(map[string]any); ok {
		return int(e["code"].(float64))
	}
	return 0
}

// createTask calls tool as a 2025-11-25 task and returns its id.
func createTask(t *testing.T, ss *Session, tool, args string) string {
	t.Helper()
	got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`,"task":{"ttl":60000}}}`)
	tk, ok := result(t, got)["task"].(map[string]any)
	if !ok || tk["status"] != "working" || tk["taskId"] == "" {
		t.Fatalf("not a CreateTaskResult: %s", got)
	}
	return tk["taskId"].(string)
}

func taskReq(method, id string) string {
	return `{"jsonrpc":"2.0","id":2,"method":"` + method + `","params":{"taskId":"` + id + `"}}`
}

// waitStatus polls tasks/get until the task has status (or fails).
func waitStatus(t *testing.T, get func() map[string]any, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		tk := get()
		if tk["status"] == status {
			return tk
		}
		if time.Now().After(deadline) {
			t.Fatalf("task never reached %s: %v", status, tk)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A 2025-11-25 task from creation to result: the capability, the tool's
// execution, CreateTaskResult, tasks/get, tasks/result with related-task,
// and a status notification.
func TestTaskHandshakeLifecycle(t *testing.T) {
	pool := newFakePool()
	srv := newTaskServer(t, pool, Options{})
	rec := &recorder{}
	ss := srv.NewSession(rec.notify)
	defer ss.Close()
	init := reply(t, ss, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	if !strings.Contains(init, `"tasks":{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}`) {
		t.Errorf("initialize lacks the tasks capability: %s", init)
	}
	list := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	for _, want := range []string{`"name":"work","description":"Add one once released","inputSchema":{"type":"object","properties":{"_1":{"type":"integer","description":"n"}},"required":["_1"],"additionalProperties":false},"execution":{"taskSupport":"optional"}}`, `"execution":{"taskSupport":"required"}`} {
		if !strings.Contains(list, want) {
			t.Errorf("tools/list lacks %s:\n%s", want, list)
		}
	}
	if strings.Contains(list, `"name":"add","description":"Add one, no task","inputSchema":{"type":"object","properties":{"_1":{"type":"integer","description":"n"}},"required":["_1"],"additionalProperties":false},"execution"`) {
		t.Errorf("a forbidden tool shows execution: %s", list)
	}

	id := createTask(t, ss, "work", `{"_1":41}`)
	tk := result(t, reply(t, ss, taskReq("tasks/get", id)))
	for k, want := range map[string]any{"taskId": id, "status": "working", "ttl": 60000.0, "pollInterval": 1000.0} {
		if tk[k] != want {
			t.Errorf("tasks/get %s = %v, want %v", k, tk[k], want)
		}
	}
	if _, err := time.Parse(time.RFC3339, tk["createdAt"].(string)); err != nil {
		t.Errorf("createdAt: %v", err)
	}
	close(pool.release)
	got := reply(t, ss, taskReq("tasks/result", id))
	want := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"42"}],"isError":false,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"` + id + `"}}}}`
	if got != want {
		t.Errorf("tasks/result:\n got %s\nwant %s", got, want)
	}
	if s := result(t, reply(t, ss, taskReq("tasks/get", id)))["status"]; s != "completed" {
		t.Errorf("status after the result: %v", s)
	}
	notes := strings.Join(rec.all(), "\n")
	if !strings.Contains(notes, `"method":"notifications/tasks/status","params":{"taskId":"`+id+`","status":"completed"`) {
		t.Errorf("no completed status notification:\n%s", notes)
	}
}

// Errors the 2025-11-25 task methods answer, and what clients of older
// versions see (nothing changes for them).
func TestTaskHandshakeErrors(t *testing.T) {
	srv := newTaskServer(t, newFakePool(), Options{})
	ss := initialized(t, srv, "2025-11-25", nil)
	done := createTask(t, ss, "must", `{}`)
	waitStatus(t, func() map[string]any { return result(t, reply(t, ss, taskReq("tasks/get", done))) }, "completed")
	tests := []struct {
		name, line string
		code       int
		message    string
	}{
		{"unknown task on get", taskReq("tasks/get", "nope"), CodeInvalidParams, "unknown task 'nope'"},
		{"unknown task on result", taskReq("tasks/result", "nope"), CodeInvalidParams, "unknown task"},
		{"unknown task on cancel", taskReq("tasks/cancel", "nope"), CodeInvalidParams, "unknown task"},
		{"no taskId", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{}}`, CodeInvalidParams, "params.taskId must be a string"},
		{"cancel a terminal task", taskReq("tasks/cancel", done), CodeInvalidParams, "already in terminal status 'completed'"},
		{"task on a forbidden tool", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"_1":1},"task":{}}}`, CodeMethodNotFound, "cannot be called as a task"},
		{"required tool without a task", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"must","arguments":{}}}`, CodeMethodNotFound, "must be called as a task"},
		{"bad ttl", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work","arguments":{"_1":1},"task":{"ttl":-5}}}`, CodeInvalidParams, "ttl must be a positive number"},
		{"task not an object", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work","arguments":{"_1":1},"task":7}}`, CodeInvalidParams, "params.task must be an object"},
		{"bad cursor", `{"jsonrpc":"2.0","id":2,"method":"tasks/list","params":{"cursor":"x"}}`, CodeInvalidParams, "unknown cursor"},
		{"tasks/update is 2026-07-28's", taskReq("tasks/update", done), CodeMethodNotFound, "method not found"},
		{"unknown tool with a task", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","task":{}}}`, CodeInvalidParams, "unknown tool 'nope'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := reply(t, ss, tt.line)
			if errorCode(t, got) != tt.code || !strings.Contains(got, tt.message) {
				t.Errorf("got %s\nwant code %d with %q", got, tt.code, tt.message)
			}
		})
	}

	// 2025-06-18 has no tasks: the same initialize as ever, params.task
	// ignored, a required tool called plainly, tasks/* not found.
	old := initialized(t, srv, "2025-06-18", nil)
	if got := reply(t, old, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`); strings.Contains(got, "tasks") {
		t.Errorf("a 2025-06-18 initialize declares tasks: %s", got)
	}
	for _, tt := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"must","arguments":{},"task":{"ttl":1000}}}`, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"7"}],"isError":false}}`},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, `!execution`},
		{taskReq("tasks/get", done), `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: tasks/get"}}`},
	} {
		got := reply(t, old, tt.line)
		if neg, ok := strings.CutPrefix(tt.want, "!"); ok {
			if strings.Contains(got, neg) {
				t.Errorf("2025-06-18 %s shows %s: %s", tt.line, neg, got)
			}
		} else if got != tt.want {
			t.Errorf("2025-06-18 %s:\n got %s\nwant %s", tt.line, got, tt.want)
		}
	}
}

// tasks/list pages through the session's tasks, oldest first.
func TestTaskListPages(t *testing.T) {
	srv := newTaskServer(t, newFakePool(), Options{PageSize: 2})
	ss := initialized(t, srv, "2025-11-25", nil)
	var want []string
	for range 5 {
		want = append(want, createTask(t, ss, "slow", `{}`))
	}
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		res := result(t, reply(t, ss, `{"jsonrpc":"2.0","id":2,"method":"tasks/list","params":`+params+`}`))
		for _, tk := range res["tasks"].([]any) {
			got = append(got, tk.(map[string]any)["taskId"].(string))
		}
		next, ok := res["nextCursor"].(string)
		if !ok {
			if pages != 2 {
				t.Errorf("%d pages, want 3", pages+1)
			}
			break
		}
		cursor = next
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("listed %v\nwant   %v", got, want)
	}
}

// tasks/cancel ends the task at once and stops the function; tasks/result
// then gives what the cancelled call answered.
func TestTaskCancelStopsCall(t *testing.T) {
	pool := newFakePool()
	srv := newTaskServer(t, pool, Options{})
	ss := initialized(t, srv, "2025-11-25", nil)
	id := createTask(t, ss, "slow", `{}`)
	got := result(t, reply(t, ss, taskReq("tasks/cancel", id)))
	if got["status"] != "cancelled" || got["statusMessage"] != "The task was cancelled by request." {
		t.Errorf("tasks/cancel: %v", got)
	}
	res := result(t, reply(t, ss, taskReq("tasks/result", id)))
	if res["isError"] != true {
		t.Errorf("tasks/result of a cancelled task: %v", res)
	}
	if pool.cancels() != 1 {
		t.Errorf("the function saw %d cancellations, want 1", pool.cancels())
	}
	if s := result(t, reply(t, ss, taskReq("tasks/get", id)))["status"]; s != "cancelled" {
		t.Errorf("status after the call returned: %v (a cancelled task stays cancelled)", s)
	}
}

// A task past its ttl is gone, and its call stopped.
func TestTaskTTLExpiry(t *testing.T) {
	pool := newFakePool()
	srv := newTaskServer(t, pool, Options{})
	ss := initialized(t, srv, "2025-11-25", nil)
	got := reply(t, ss, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"task":{"ttl":50}}}`)
	id := result(t, got)["task"].(map[string]any)["taskId"].(string)
	deadline := time.Now().Add(5 * time.Second)
	for errorCode(t, reply(t, ss, taskReq("tasks/get", id))) != CodeInvalidParams {
		if time.Now().After(deadline) {
			t.Fatal("the task outlived its ttl")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for pool.cancels() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the expired task's call was not stopped")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// At most MaxTasks tasks exist at once; the next one is refused clearly,
// and a slot frees when a task goes.
func TestMaxTasks(t *testing.T) {
	srv := newTaskServer(t, newFakePool(), Options{MaxTasks: 2})
	ss := initialized(t, srv, "2025-11-25", nil)
	first := createTask(t, ss, "slow", `{}`)
	createTask(t, ss, "slow", `{}`)
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"task":{}}}`
	if got := reply(t, ss, line); errorCode(t, got) != CodeInternalError || !strings.Contains(got, "too many tasks: 2 exist") {
		t.Errorf("over the cap: %s", got)
	}
	// A cancelled task still counts until its ttl; a closed session's do not.
	reply(t, ss, taskReq("tasks/cancel", first))
	ss.Close()
	ss2 := initialized(t, srv, "2025-11-25", nil)
	createTask(t, ss2, "slow", `{}`)
}

// Another session cannot see, read or cancel a task; a stateless request
// sees only its owner's (WithTaskOwner); closing the session stops its
// tasks.
func TestTaskOwnership(t *testing.T) {
	pool := newFakePool()
	srv := newTaskServer(t, pool, Options{})
	a := initialized(t, srv, "2025-11-25", nil)
	b := initialized(t, srv, "2025-11-25", nil)
	id := createTask(t, a, "slow", `{}`)
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if got := reply(t, b, taskReq(m, id)); errorCode(t, got) != CodeInvalidParams || !strings.Contains(got, "unknown task") {
			t.Errorf("%s of another session's task: %s", m, got)
		}
	}
	if got := result(t, reply(t, b, `{"jsonrpc":"2.0","id":1,"method":"tasks/list"}`)); len(got["tasks"].([]any)) != 0 {
		t.Errorf("tasks/list shows another session's task: %v", got)
	}
	if got := result(t, reply(t, a, `{"jsonrpc":"2.0","id":1,"method":"tasks/list"}`)); len(got["tasks"].([]any)) != 1 {
		t.Errorf("tasks/list of the owner: %v", got)
	}

	alice := WithTaskOwner(context.Background(), "token:alice")
	bob := WithTaskOwner(context.Background(), "token:bob")
	created := stateless(t, srv, alice, "tools/call", `"name":"slow","arguments":{}`)
	sid := created["taskId"].(string)
	if got := statelessLine(t, srv, bob, "tasks/get", `"taskId":"`+sid+`"`); errorCode(t, got) != CodeInvalidParams {
		t.Errorf("another token's tasks/get: %s", got)
	}
	if got := stateless(t, srv, alice, "tasks/get", `"taskId":"`+sid+`"`); got["status"] != "working" {
		t.Errorf("the owner's tasks/get: %v", got)
	}

	a.Close()
	deadline := time.Now().Add(5 * time.Second)
	for pool.cancels() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("closing the session did not stop its task")
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.CloseTasks()
	for pool.cancels() != 2 {
		if time.Now().After(deadline) {
			t.Fatal("CloseTasks did not stop the stateless task")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := statelessLine(t, srv, alice, "tools/call", `"name":"slow","arguments":{}`); errorCode(t, got) != CodeInternalError {
		t.Errorf("a task after CloseTasks: %s", got)
	}
}

// extensionCaps declares the tasks extension and elicitation.
const extensionCaps = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// statelessLine sends a 2026-07-28 request declaring extensionCaps.
func statelessLine(t *testing.T, srv *Server, ctx context.Context, method, params string) string {
	return statelessWith(t, srv, ctx, extensionCaps, method, params)
}

func statelessWith(t *testing.T, srv *Server, ctx context.Context, caps, method, params string) string {
	t.Helper()
	if params != "" {
		params += ","
	}
	line := `{"jsonrpc":"2.0","id":5,"method":"` + method + `","params":{` + params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
	return marshal(t, srv.HandleStateless(ctx, req(t, line), nil))
}

func stateless(t *testing.T, srv *Server, ctx context.Context, method, params string) map[string]any {
	t.Helper()
	return result(t, statelessLine(t, srv, ctx, method, params))
}

// The 2026-07-28 tasks extension, as the conformance suite's pending tasks
// scenarios check it (SEP-2663).
func TestTaskExtension(t *testing.T) {
	pool := newFakePool()
	srv := newTaskServer(t, pool, Options{})
	ctx := context.Background()
	get := func(id string) func() map[string]any {
		return func() map[string]any { return stateless(t, srv, ctx, "tasks/get", `"taskId":"`+id+`"`) }
	}

	disc := statelessLine(t, srv, ctx, "server/discover", "")
	if !strings.Contains(disc, `"extensions":{"io.modelcontextprotocol/tasks":{}}`) || strings.Contains(disc, `"tasks":{`) {
		t.Errorf("server/discover: %s", disc)
	}

	// A task-supporting tool is a task, flat; a forbidden one is not, even
	// with an old client's params.task.
	created := stateless(t, srv, ctx, "tools/call", `"name":"work","arguments":{"_1":1}`)
	for _, k := range []string{"taskId", "createdAt", "lastUpdatedAt"} {
		if created[k] == nil {
			t.Errorf("CreateTaskResult lacks %s: %v", k, created)
		}
	}
	for k, want := range map[string]any{"resultType": "task", "status": "working", "ttlMs": 3600000.0, "pollIntervalMs": 1000.0} {
		if created[k] != want {
			t.Errorf("CreateTaskResult %s = %v, want %v", k, created[k], want)
		}
	}
	for _, k := range []string{"task", "ttl", "pollInterval", "result", "requestState", "inputRequests"} {
		if _, ok := created[k]; ok {
			t.Errorf("CreateTaskResult carries %s: %v", k, created)
		}
	}
	id := created["taskId"].(string)
	if got := get(id)(); got["status"] != "working" || got["resultType"] != "complete" || got["result"] != nil {
		t.Errorf("tasks/get while working: %v", got)
	}
	close(pool.release)
	done := waitStatus(t, get(id), "completed")
	if res, _ := done["result"].(map[string]any); res == nil || fmt.Sprint(res["content"]) != "[map[text:2 type:text]]" || res["_meta"].(map[string]any)[metaRelatedTask] != nil {
		t.Errorf("completed task's result: %v", done)
	}
	if got := stateless(t, srv, ctx, "tools/call", `"name":"add","arguments":{"_1":1},"task":{"ttl":60000}`); got["resultType"] != "complete" || got["taskId"] != nil {
		t.Errorf("a forbidden tool with params.task: %v", got)
	}

	// A function that raises: completed with isError. A pool that dies:
	// failed, with the error inlined.
	raisedID := stateless(t, srv, ctx, "tools/call", `"name":"raises","arguments":{}`)["taskId"].(string)
	if got := waitStatus(t, get(raisedID), "completed"); got["result"].(map[string]any)["isError"] != true {
		t.Errorf("a raising function: %v", got)
	}
	crashID := stateless(t, srv, ctx, "tools/call", `"name":"crash","arguments":{}`)["taskId"].(string)
	if got := waitStatus(t, get(crashID), "failed"); got["result"] != nil || fmt.Sprint(got["error"]) != "map[code:-32603 message:pool py died (exit status 1)]" {
		t.Errorf("a dead pool: %v", got)
	}

	// Cancel: an empty ack, also for a terminal task.
	slowID := stateless(t, srv, ctx, "tools/call", `"name":"slow","arguments":{}`)["taskId"].(string)
	for range 2 {
		ack := stateless(t, srv, ctx, "tasks/cancel", `"taskId":"`+slowID+`"`)
		if ack["resultType"] != "complete" || ack["taskId"] != nil || ack["status"] != nil {
			t.Errorf("tasks/cancel ack: %v", ack)
		}
	}
	waitStatus(t, get(slowID), "cancelled")

	caps := `{}`
	tests := []struct {
		name, caps, method, params string
		code                       int
		contains                   string
	}{
		{"required tool without the extension", caps, "tools/call", `"name":"must","arguments":{}`, CodeMissingClientCapability, `"data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`},
		{"tasks/get without the extension", caps, "tasks/get", `"taskId":"` + id + `"`, CodeMissingClientCapability, "needs the io.modelcontextprotocol/tasks extension"},
		{"tasks/update without the extension", caps, "tasks/update", `"taskId":"x","inputResponses":{}`, CodeMissingClientCapability, ""},
		{"tasks/cancel without the extension", caps, "tasks/cancel", `"taskId":"x"`, CodeMissingClientCapability, ""},
		{"tasks/result is gone", extensionCaps, "tasks/result", `"taskId":"` + id + `"`, CodeMethodNotFound, ""},
		{"tasks/list is gone", extensionCaps, "tasks/list", ``, CodeMethodNotFound, ""},
		{"unknown task", extensionCaps, "tasks/get", `"taskId":"tasks-conformance-nonexistent-12345"`, CodeInvalidParams, "unknown task"},
		{"update without inputResponses", extensionCaps, "tasks/update", `"taskId":"` + id + `"`, CodeInvalidParams, "inputResponses must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := statelessWith(t, srv, ctx, tt.caps, tt.method, tt.params)
			if errorCode(t, got) != tt.code || !strings.Contains(got, tt.contains) {
				t.Errorf("got %s\nwant code %d with %q", got, tt.code, tt.contains)
			}
		})
	}
	if got := result(t, statelessWith(t, srv, ctx, caps, "tools/call", `"name":"work","arguments":{"_1":5}`)); got["resultType"] != "complete" || fmt.Sprint(got["content"]) != "[map[text:6 type:text]]" {
		t.Errorf("an optional tool without the extension: %v", got)
	}
}

// A 2026-07-28 task whose function asks: input_required with the questions
// in inputRequests under stable names; tasks/update answers some (unknown
// keys ignored), then the rest, and the function gets each answer.
func TestTaskExtensionInput(t *testing.T) {
	srv := newTaskServer(t, newFakePool(), Options{})
	ctx := context.Background()
	id := stateless(t, srv, ctx, "tools/call", `"name":"asker","arguments":{}`)["taskId"].(string)
	get := func() map[string]any { return stateless(t, srv, ctx, "tasks/get", `"taskId":"`+id+`"`) }
	var tk map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for {
		tk = get()
		if reqs, _ := tk["inputRequests"].(map[string]any); len(reqs) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never two questions: %v", tk)
		}
		time.Sleep(5 * time.Millisecond)
	}
	reqs := tk["inputRequests"].(map[string]any)
	if tk["status"] != "input_required" || reqs["elicitation-1"] == nil || reqs["elicitation-2"] == nil {
		t.Fatalf("input_required task: %v", tk)
	}
	first := reqs["elicitation-1"].(map[string]any)
	if first["method"] != "elicitation/create" || first["params"].(map[string]any)["requestedSchema"] == nil {
		t.Errorf("an input request: %v", first)
	}
	ack := stateless(t, srv, ctx, "tasks/update", `"taskId":"`+id+`","inputResponses":{"elicitation-1":{"action":"accept","content":{"n":1}},"unknown-key":{"ignored":true}}`)
	if ack["resultType"] != "complete" || len(ack) != 2 { // resultType and _meta
		t.Errorf("tasks/update ack: %v", ack)
	}
	tk = get()
	if rest, _ := tk["inputRequests"].(map[string]any); tk["status"] != "input_required" || len(rest) != 1 || rest["elicitation-2"] == nil {
		t.Errorf("after a partial update: %v", tk)
	}
	stateless(t, srv, ctx, "tasks/update", `"taskId":"`+id+`","inputResponses":{"elicitation-2":{"action":"decline"}}`)
	done := waitStatus(t, get, "completed")
	var text string
	json.Unmarshal([]byte(done["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)), &text)
	if !strings.Contains(text, `{"action":"accept","content":{"n":1}}`) || !strings.Contains(text, `{"action":"decline"}`) {
		t.Errorf("the function's answers: %s", text)
	}

	// Without the elicitation capability the function is told so.
	noElicit := `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	id2 := result(t, statelessWith(t, srv, ctx, noElicit, "tools/call", `"name":"asker","arguments":{}`))["taskId"].(string)
	done = waitStatus(t, func() map[string]any {
		return result(t, statelessWith(t, srv, ctx, noElicit, "tasks/get", `"taskId":"`+id2+`"`))
	}, "completed")
	if text := fmt.Sprint(done["result"]); !strings.Contains(text, "the client did not declare the elicitation capability") {
		t.Errorf("a question the client cannot take: %s", text)
	}
}

// In the handshake era a task's question goes out through the call's own
// Ask with related-task _meta added, and the task is input_required (with
// a notification) until the answer comes back.
func TestTaskHandshakeAsk(t *testing.T) {
	rec := &recorder{}
	tk := &task{id: "t1", notify: rec.notify, status: taskWorking, done: make(chan struct{}), cancel: func() {}}
	answer := make(chan struct{})
	var seen json.RawMessage
	inner := func(ctx context.Context, q Question) (json.RawMessage, error) {
		seen = q.Params
		<-answer
		return json.RawMessage(`{"action":"accept"}`), nil
	}
	got := make(chan string)
	go func() {
		a, err := tk.ask(inner)(context.Background(), Question{Kind: "elicit", Params: json.RawMessage(`{"message":"sure?","_meta":{"x":1}}`)})
		got <- fmt.Sprintf("%s %v", a, err)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for tk.snapshotStatus() != taskInputRequired {
		if time.Now().After(deadline) {
			t.Fatal("never input_required")
		}
		time.Sleep(time.Millisecond)
	}
	close(answer)
	if a := <-got; a != `{"action":"accept"} <nil>` {
		t.Errorf("answer: %s", a)
	}
	if string(seen) != `{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"},"x":1},"message":"sure?"}` {
		t.Errorf("params sent: %s", seen)
	}
	if tk.snapshotStatus() != taskWorking {
		t.Errorf("status after the answer: %s", tk.snapshotStatus())
	}
	notes := strings.Join(rec.all(), "\n")
	if !strings.Contains(notes, `"status":"input_required"`) || !strings.Contains(notes, `"status":"working"`) {
		t.Errorf("status notifications:\n%s", notes)
	}
	if _, err := tk.ask(nil)(context.Background(), Question{Kind: "elicit"}); err == nil || err.Error() != "this call cannot ask the client" {
		t.Errorf("no inner Ask: %v", err)
	}
}
