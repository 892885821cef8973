package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// call sends a request over stdio and returns its reply, with the
// notifications that came before it.
func (s *server) call(id int, method string, params any) (reply msg, notes []msg) {
	s.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	s.send(string(b))
	for {
		m := s.recv()
		if m["id"] == nil {
			notes = append(notes, m)
			continue
		}
		if idOf(m) != fmt.Sprint(id) {
			s.t.Fatalf("reply to another request: %v", m)
		}
		return m, notes
	}
}

// resultOf returns a reply's result object, failing on an error.
func resultOf(t *testing.T, m msg) map[string]any {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("expected a result, got %v", m)
	}
	return res
}

// A slow Python function run as a 2025-11-25 task over stdio: created at
// once, polled, its result fetched, its status notified; and another
// cancelled, which stops the function in its pool.
func TestTasksStdio(t *testing.T) {
	s := startServer(t, program("everything"))
	init, _ := s.call(0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "e2e", "version": "0"}})
	if caps := resultOf(t, init)["capabilities"].(map[string]any); caps["tasks"] == nil {
		t.Fatalf("no tasks capability: %v", init)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	created, _ := s.call(1, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 1, "label": "stdio"}, "task": map[string]any{"ttl": 60000}})
	task := resultOf(t, created)["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" || task["status"] != "working" {
		t.Fatalf("CreateTaskResult: %v", created)
	}
	var notes []msg
	deadline := time.Now().Add(20 * time.Second)
	for n := 2; ; n++ {
		got, more := s.call(n, "tasks/get", map[string]any{"taskId": id})
		notes = append(notes, more...)
		if st := resultOf(t, got)["status"]; st == "completed" {
			break
		} else if st != "working" || time.Now().After(deadline) {
			t.Fatalf("tasks/get: %v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	res, more := s.call(100, "tasks/result", map[string]any{"taskId": id})
	notes = append(notes, more...)
	if text, isErr := toolText(t, res); text != `"stdio: computed after 1 s"` || isErr {
		t.Errorf("tasks/result: %v", res)
	}
	if meta, _ := resultOf(t, res)["_meta"].(map[string]any); meta["io.modelcontextprotocol/related-task"] == nil {
		t.Errorf("tasks/result lacks related-task: %v", res)
	}
	completed := false
	for _, n := range notes {
		p, _ := n["params"].(map[string]any)
		completed = completed || (n["method"] == "notifications/tasks/status" && p["taskId"] == id && p["status"] == "completed")
	}
	if !completed {
		t.Errorf("no completed notifications/tasks/status among %v", notes)
	}

	marker := filepath.Join(t.TempDir(), "cancelled")
	created, _ = s.call(101, "tools/call", map[string]any{"name": "cancel_probe", "arguments": map[string]any{"_1": marker}, "task": map[string]any{}})
	probe := resultOf(t, created)["task"].(map[string]any)["taskId"].(string)
	waitForStarted(t, marker)
	cancelled, _ := s.call(102, "tasks/cancel", map[string]any{"taskId": probe})
	if resultOf(t, cancelled)["status"] != "cancelled" {
		t.Errorf("tasks/cancel: %v", cancelled)
	}
	waitForMarker(t, marker, 30*time.Second)

	list, _ := s.call(103, "tasks/list", map[string]any{})
	if tasks, _ := resultOf(t, list)["tasks"].([]any); len(tasks) != 2 {
		t.Errorf("tasks/list: %v", list)
	}
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit: %v", err)
	}
}

// rpcJSON posts a message and decodes its JSON (or single-event SSE) reply.
func (s *httpServer) rpcJSON(body string, headers ...string) (int, msg) {
	s.t.Helper()
	resp, text := s.rpc(body, headers...)
	if data, ok := strings.CutPrefix(text, "event: message\ndata: "); ok {
		text = data
	}
	for line := range strings.SplitSeq(text, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			text = d // the last event: the reply
		}
	}
	return resp.StatusCode, decode(s.t, strings.TrimSpace(text))
}

// statelessTask is a 2026-07-28 request body declaring the tasks extension.
func statelessTask(id int, method, params string) string {
	if params != "" {
		params += ","
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`, id, method, params)
}

// Tasks over HTTP against the real binary and a real Python pool: a
// 2025-11-25 session's task, out of another session's reach; and the
// 2026-07-28 extension, routed by Mcp-Name, cancelled into its pool.
func TestTasksHTTP(t *testing.T) {
	testenv.Long(t) // the fast tier has the unit tests of this path
	srv := startHTTP(t, nil, "serve", "--port", "0", "--max-tasks", "50", program("everything"))

	a, b := srv.session(), srv.session()
	_, created := srv.rpcJSON(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":1,"label":"http"},"task":{}}}`, "Mcp-Session-Id", a)
	id := resultOf(t, created)["task"].(map[string]any)["taskId"].(string)
	if _, other := srv.rpcJSON(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"`+id+`"}}`, "Mcp-Session-Id", b); errCode(other) != -32602 {
		t.Errorf("another session's tasks/get: %v", other)
	}
	// tasks/result blocks until the function is done.
	_, res := srv.rpcJSON(`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"`+id+`"}}`, "Mcp-Session-Id", a)
	if text, isErr := toolText(t, res); text != `"http: computed after 1 s"` || isErr {
		t.Errorf("tasks/result: %v", res)
	}
	if _, got := srv.rpcJSON(`{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"`+id+`"}}`, "Mcp-Session-Id", a); resultOf(t, got)["status"] != "completed" {
		t.Errorf("tasks/get after the result: %v", got)
	}

	// 2026-07-28: the server makes the task; Mcp-Name carries its id.
	headers := func(method, name string) []string {
		h := []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method}
		if name != "" {
			h = append(h, "Mcp-Name", name)
		}
		return h
	}
	_, created = srv.rpcJSON(statelessTask(5, "tools/call", `"name":"slow_compute","arguments":{"seconds":1,"label":"v2"}`), headers("tools/call", "slow_compute")...)
	v2 := resultOf(t, created)
	sid, _ := v2["taskId"].(string)
	if v2["resultType"] != "task" || sid == "" {
		t.Fatalf("2026-07-28 CreateTaskResult: %v", created)
	}
	if status, got := srv.rpcJSON(statelessTask(6, "tasks/get", `"taskId":"`+sid+`"`), headers("tasks/get", "wrong")...); status != http.StatusBadRequest || errCode(got) != -32020 {
		t.Errorf("a wrong Mcp-Name: %d %v", status, got)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, got := srv.rpcJSON(statelessTask(7, "tasks/get", `"taskId":"`+sid+`"`), headers("tasks/get", sid)...)
		tk := resultOf(t, got)
		if tk["status"] == "completed" {
			if r, _ := tk["result"].(map[string]any); fmt.Sprint(r["content"]) != `[map[text:"v2: computed after 1 s" type:text]]` {
				t.Errorf("inlined result: %v", tk)
			}
			break
		}
		if tk["status"] != "working" || time.Now().After(deadline) {
			t.Fatalf("tasks/get: %v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}

	marker := filepath.Join(t.TempDir(), "cancelled")
	_, created = srv.rpcJSON(statelessTask(8, "tools/call", fmt.Sprintf(`"name":"cancel_probe","arguments":{"_1":%q}`, marker)), headers("tools/call", "cancel_probe")...)
	probe := resultOf(t, created)["taskId"].(string)
	waitForStarted(t, marker)
	if _, ack := srv.rpcJSON(statelessTask(9, "tasks/cancel", `"taskId":"`+probe+`"`), headers("tasks/cancel", probe)...); resultOf(t, ack)["resultType"] != "complete" {
		t.Errorf("tasks/cancel: %v", ack)
	}
	waitForMarker(t, marker, 30*time.Second)
}

// --max-tasks caps the tasks kept at once, on stdio too.
func TestTasksMaxTasks(t *testing.T) {
	s := startServer(t, program("everything"), "--max-tasks", "1")
	s.call(0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}})
	args := map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 30, "label": "cap"}, "task": map[string]any{}}
	if first, _ := s.call(1, "tools/call", args); resultOf(t, first)["task"] == nil {
		t.Fatalf("first task: %v", first)
	}
	second, _ := s.call(2, "tools/call", args)
	if errCode(second) != -32603 || !strings.Contains(errMessage(second), "too many tasks: 1 exist") {
		t.Errorf("over --max-tasks: %v", second)
	}
}
