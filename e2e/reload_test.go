package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// Hot reload (docs/spec.md §6.4): nexus mcp --watch, nexus serve --watch and
// SIGHUP, on a copy of testdata/shapes that the tests rebuild in place.

// copyProgram copies testdata/<name> to a temporary directory.
func copyProgram(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.Walk(program(name), func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(program(name), path)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, info.Mode())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// replaceFile writes path as a compiler or an editor does: a new file
// renamed over the old one.
func replaceFile(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(edit(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// louder rebuilds the shapes pool: shout adds three marks, sleepMs answers
// one more than it slept.
func louder(t *testing.T, dir string) {
	t.Helper()
	replaceFile(t, filepath.Join(dir, "pools", "py", "pool.py"), func(s string) string {
		s = strings.Replace(s, `return words.upper() + "!"`, `return words.upper() + "!!!"`, 1)
		return strings.Replace(s, "    nexus.sleep(ms / 1000)\n    return ms\n", "    nexus.sleep(ms / 1000)\n    return ms + 1\n", 1)
	})
}

// withYell adds a tool yell to the shapes manifest, running shout's function.
func withYell(t *testing.T, dir string) {
	t.Helper()
	replaceFile(t, filepath.Join(dir, "manifest.json"), func(s string) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		cmds := m["commands"].([]any)
		for _, c := range cmds {
			if c.(map[string]any)["name"] == "shout" {
				yell := map[string]any{}
				for k, v := range c.(map[string]any) {
					yell[k] = v
				}
				yell["name"] = "yell"
				m["commands"] = append(cmds, yell)
				break
			}
		}
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	})
}

// pythonPools are the Python pool processes among nexus's descendants.
func pythonPools(pid int) map[int]string {
	out := map[int]string{}
	for p, c := range descendants(pid) {
		if isPythonPool(c) {
			out[p] = c
		}
	}
	return out
}

// inbox reads a stdio server's messages, keeping those not yet asked for.
type inbox struct {
	s    *server
	kept []msg
}

// await returns the first message, kept or new, for which match is true.
func (b *inbox) await(what string, within time.Duration, match func(msg) bool) msg {
	b.s.t.Helper()
	for i, m := range b.kept {
		if match(m) {
			b.kept = append(b.kept[:i], b.kept[i+1:]...)
			return m
		}
	}
	deadline := time.Now().Add(within)
	for {
		line, ok := b.s.recvWithin(time.Until(deadline))
		if !ok {
			b.s.t.Fatalf("no %s within %v; other messages: %v; stderr:\n%s", what, within, b.kept, b.s.stderr.String())
		}
		m := decode(b.s.t, line)
		if match(m) {
			return m
		}
		b.kept = append(b.kept, m)
	}
}

func (b *inbox) reply(id int) msg {
	b.s.t.Helper()
	return b.await("reply to "+fmtPID(id), 60*time.Second, func(m msg) bool { return idOf(m) == fmtPID(id) && m["method"] == nil })
}

func (b *inbox) call(id int, name string, args map[string]any) string {
	b.s.t.Helper()
	b.s.sendCall(id, name, args)
	text, isErr := toolText(b.s.t, b.reply(id))
	if isErr {
		b.s.t.Fatalf("%s: isError: %s", name, text)
	}
	return text
}

func isMethod(method string) func(msg) bool {
	return func(m msg) bool { return m["method"] == method }
}

// nexus mcp --watch: a rebuild (a new tool in the manifest, a changed
// Python function) is served at once and announced with list_changed; a
// call in flight finishes on the old pool, which then goes away.
func TestWatchStdio(t *testing.T) {
	testenv.Long(t) // the fast tier has the unit tests of this path
	testenv.NeedPython(t)
	dir := copyProgram(t, "shapes")
	s := startServer(t, dir, "--watch")
	s.send(initLine)
	if init := s.recvRaw(); !strings.Contains(init, `"capabilities":{"tools":{"listChanged":true}}`) {
		t.Fatalf("initialize under --watch: %s", init)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	b := &inbox{s: s}
	if got := b.call(1, "shout", map[string]any{"_1": "hi"}); got != `"HI!"` {
		t.Fatalf("shout before the rebuild: %s", got)
	}
	oldPools := pythonPools(s.cmd.Process.Pid)
	if len(oldPools) != 1 {
		t.Fatalf("want one Python pool, have %v", oldPools)
	}
	s.sendCall(2, "sleepMs", map[string]any{"_1": 2500}) // in flight across the reload
	time.Sleep(300 * time.Millisecond)

	louder(t, dir)
	withYell(t, dir)
	b.await("notifications/tools/list_changed", 30*time.Second, isMethod("notifications/tools/list_changed"))

	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if list, _ := json.Marshal(b.reply(3)); !strings.Contains(string(list), `"name":"yell"`) {
		t.Errorf("tools/list after the rebuild lacks yell: %s", list)
	}
	for i, name := range []string{"shout", "yell"} {
		if got := b.call(4+i, name, map[string]any{"_1": "hi"}); got != `"HI!!!"` {
			t.Errorf("%s after the rebuild: %s, want the new code's \"HI!!!\"", name, got)
		}
	}
	if got, _ := toolText(t, b.reply(2)); got != "2500" {
		t.Errorf("the call in flight answered %s, want 2500 from the old code", got)
	}
	waitGone(t, oldPools)
	if now := pythonPools(s.cmd.Process.Pid); len(now) != 1 {
		t.Errorf("after the reload: Python pools %v, want the new one alone", now)
	}
	if got := b.call(6, "sleepMs", map[string]any{"_1": 10}); got != "11" {
		t.Errorf("sleepMs after the rebuild: %s, want the new code's 11", got)
	}
}

// A rebuild that does not load (a manifest that is not JSON, a pool that
// cannot start) leaves the old program serving and says why: on stderr,
// and as a log message to a client that asked for them.
func TestWatchStdioBrokenRebuild(t *testing.T) {
	testenv.NeedPython(t)
	testenv.Long(t)
	tests := []struct {
		name    string
		rebuild func(t *testing.T, dir string)
		why     string
	}{
		{"manifest not JSON", func(t *testing.T, dir string) {
			replaceFile(t, filepath.Join(dir, "manifest.json"), func(string) string { return `{"name": "shapes", ` })
		}, "manifest"},
		{"pool fails to start", func(t *testing.T, dir string) {
			replaceFile(t, filepath.Join(dir, "pools", "py", "pool.py"), func(s string) string { return "def broken(:\n" + s })
		}, "failed to start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyProgram(t, "shapes")
			s := startServer(t, dir, "--watch")
			s.handshake()
			b := &inbox{s: s}
			s.send(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"warning"}}`)
			b.reply(1)
			if got := b.call(2, "shout", map[string]any{"_1": "hi"}); got != `"HI!"` {
				t.Fatalf("shout: %s", got)
			}
			tt.rebuild(t, dir)
			note := b.await("the reload's error as a log message", 30*time.Second, func(m msg) bool {
				params, _ := m["params"].(map[string]any)
				data, _ := params["data"].(map[string]any)
				text, _ := data["message"].(string)
				return m["method"] == "notifications/message" && strings.Contains(text, "reload failed")
			})
			params := note["params"].(map[string]any)
			if err, _ := params["data"].(map[string]any)["err"].(string); params["level"] != "error" || !strings.Contains(err, tt.why) {
				t.Errorf("log message %v, want level error and an err naming %q", params, tt.why)
			}
			// stderr travels on its own pipe: it may trail stdout.
			for deadline := time.Now().Add(30 * time.Second); !strings.Contains(s.stderr.String(), "reload failed"); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("stderr lacks the failure:\n%s", s.stderr.String())
				}
			}
			if got := b.call(3, "shout", map[string]any{"_1": "hi"}); got != `"HI!"` {
				t.Errorf("shout after the failed rebuild: %s, want the old program's \"HI!\"", got)
			}
			for _, m := range b.kept {
				if m["method"] == "notifications/tools/list_changed" {
					t.Errorf("list_changed after a failed rebuild")
				}
			}
		})
	}
}

// sseStream reads a GET /mcp stream's messages.
func sseStream(t *testing.T, srv *httpServer, sid string) <-chan string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %d", resp.StatusCode)
	}
	t.Cleanup(func() { resp.Body.Close() })
	out := make(chan string, 16)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- data
			}
		}
	}()
	return out
}

// nexus serve reloads on SIGHUP, with or without --watch, and on a change
// to the program's files with --watch; a session's GET stream hears
// list_changed; the old pool goes away, and none outlives nexus.
func TestServeReload(t *testing.T) {
	testenv.NeedPython(t)
	testenv.Long(t)
	tests := []struct {
		name    string
		watch   bool
		caps    string
		trigger func(t *testing.T, srv *httpServer, dir, sid string)
		ttl     string
	}{
		{"--watch, a rebuild", true, `"tools":{"listChanged":true}`, func(t *testing.T, srv *httpServer, dir, sid string) { louder(t, dir) }, `"ttlMs":0`},
		{"SIGHUP", false, `"tools":{"listChanged":false}`, func(t *testing.T, srv *httpServer, dir, sid string) {
			louder(t, dir)
			time.Sleep(time.Second) // without --watch nothing happens yet
			if _, body := srv.rpc(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"shout","arguments":{"_1":"hi"}}}`, "Mcp-Session-Id", sid); !strings.Contains(body, `"text":"\"HI!\""`) {
				t.Errorf("before SIGHUP: %s, want the old code", body)
			}
			srv.cmd.Process.Signal(syscall.SIGHUP)
		}, `"ttlMs":3600000`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyProgram(t, "shapes")
			args := []string{"serve", "--port", "0", dir}
			if tt.watch {
				args = append(args, "--watch")
			}
			srv := startHTTP(t, nil, args...)
			resp, body := srv.rpc(httpInit)
			if !strings.Contains(body, tt.caps) {
				t.Errorf("initialize: %s lacks %s", body, tt.caps)
			}
			sid := resp.Header.Get("Mcp-Session-Id")
			srv.rpc(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid)
			events := sseStream(t, srv, sid)
			shout := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shout","arguments":{"_1":"hi"}}}`
			if _, body := srv.rpc(shout, "Mcp-Session-Id", sid); !strings.Contains(body, `"text":"\"HI!\""`) {
				t.Fatalf("shout: %s", body)
			}
			oldPools := pythonPools(srv.cmd.Process.Pid)

			tt.trigger(t, srv, dir, sid)
			select {
			case e := <-events:
				if e != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
					t.Errorf("GET stream: %s, want list_changed", e)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("no list_changed on the GET stream; stderr:\n%s", srv.stderr.String())
			}
			if _, body := srv.rpc(shout, "Mcp-Session-Id", sid); !strings.Contains(body, `"text":"\"HI!!!\""`) {
				t.Errorf("shout after the reload: %s, want the new code", body)
			}
			if _, body := scrape(t, srv, http.MethodPost, "/call/shapes/shout", `["hi"]`); !strings.Contains(body, `"HI!!!"`) {
				t.Errorf("/call after the reload: %s", body)
			}
			discover := `{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
			if _, body := srv.rpc(discover, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover"); !strings.Contains(body, tt.ttl) {
				t.Errorf("server/discover: %s lacks %s", body, tt.ttl)
			}
			waitGone(t, oldPools)
			all := descendants(srv.cmd.Process.Pid)
			srv.stop()
			waitGone(t, all)
		})
	}
}
