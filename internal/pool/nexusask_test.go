package pool

// Tests of asks (nexusask.go): a running function puts a question to
// the client through Hooks.Ask, in every runtime (testdata/pools/ask.py,
// testdata/r/ask.R, testdata/cpp/ask.cpp share mids 1..7), and the answer
// frames as nexus writes them (testdata/pools/askwire.py).

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The mids of the ask test pools; askParallel is Python's and C++'s, and
// those after it Python's only.
const (
	askGreet = iota + 1
	askSummarise
	askChat
	askRootURIs
	askCaught
	askWaitCancel
	askElicitRaw
	askParallel
	askUnboundThread
	askBadKind
)

// startAskPool starts the ask test pool of lang as pool 0.
func startAskPool(t *testing.T, lang string) *Set {
	t.Helper()
	switch lang {
	case "py":
		return startTestSet(t, Spec{Exec: []string{"python3", "ask.py"}}, Options{}).Set
	case "r":
		return startRSet(t, Spec{Exec: []string{"Rscript", "ask.R"}}, Options{}).Set
	case "cpp":
		return startCppPool(t, buildCppProgram(t, "ask.cpp"), Options{}).Set
	}
	t.Fatalf("no ask test pool for %s", lang)
	return nil
}

// askRecorder is a Hooks.Ask that answers with answer and records each ask.
type askRecorder struct {
	answer func(ctx context.Context, kind, key string, params json.RawMessage) (json.RawMessage, error)

	mu   sync.Mutex
	asks []recordedAsk
}

type recordedAsk struct {
	kind   string
	params json.RawMessage
}

func (r *askRecorder) hook(ctx context.Context, kind, key string, params json.RawMessage) (json.RawMessage, error) {
	r.mu.Lock()
	r.asks = append(r.asks, recordedAsk{kind, append(json.RawMessage(nil), params...)})
	r.mu.Unlock()
	return r.answer(ctx, kind, key, params)
}

func (r *askRecorder) recorded() []recordedAsk {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recordedAsk(nil), r.asks...)
}

// answerWith answers every ask with result, or with err when it is set.
func answerWith(result string, err error) func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
	return func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
		if err != nil {
			return nil, err
		}
		return json.RawMessage(result), nil
	}
}

// answeringHooks are hooks whose Ask answers result (or err) and records
// each question; with noHook, hooks without Ask.
func answeringHooks(result string, err error, noHook bool) (*askRecorder, Hooks) {
	rec := &askRecorder{answer: answerWith(result, err)}
	if noHook {
		return rec, Hooks{}
	}
	return rec, Hooks{Ask: rec.hook}
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

func callAsk(t *testing.T, s *Set, mid int, args []json.RawMessage, h Hooks) (json.RawMessage, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return s.Call(ctx, 0, mid, args, h)
}

// TestAsk drives each runtime's elicit, sample and roots through a real pool.
func TestAsk(t *testing.T) {
	for _, lang := range []string{"py", "r", "cpp"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel() // each language's pool of its own; most of the time is waiting
			s := startAskPool(t, lang)
			t.Run("answers", func(t *testing.T) { testAskAnswers(t, s) })
			t.Run("errors", func(t *testing.T) { testAskErrors(t, s, lang) })
			t.Run("cancel while waiting", func(t *testing.T) { testAskEndsWithCall(t, s, false) })
			t.Run("timeout while waiting", func(t *testing.T) { testAskEndsWithCall(t, s, true) })
		})
	}
}

func testAskAnswers(t *testing.T, s *Set) {
	nameSchema := `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	tests := []struct {
		name       string
		mid        int
		args       []json.RawMessage
		answer     string
		want       string // the function's result
		wantKind   string
		wantParams string
	}{
		{"elicit accepted", askGreet, nil, `{"action":"accept","content":{"name":"Ada"}}`, `"Hello, Ada!"`,
			"elicit", `{"message":"What is your name?","requestedSchema":` + nameSchema + `}`},
		{"elicit declined", askGreet, nil, `{"action":"decline"}`, `"no name (decline)"`,
			"elicit", `{"message":"What is your name?","requestedSchema":` + nameSchema + `}`},
		{"elicit result as it came", askElicitRaw, nil, `{"action":"accept","content":{"n":1,"ok":true,"tags":["a","b"]}}`,
			`{"action":"accept","content":{"n":1,"ok":true,"tags":["a","b"]}}`,
			"elicit", `{"message":"Anything?","requestedSchema":{"type":"object","properties":{}}}`},
		{"sample a prompt", askSummarise, []json.RawMessage{json.RawMessage(`"a long text"`)},
			`{"role":"assistant","content":{"type":"text","text":"short"},"model":"m","stopReason":"endTurn"}`, `"short"`,
			"sample", `{"messages":[{"role":"user","content":{"type":"text","text":"Summarise: a long text"}}],"maxTokens":50,"systemPrompt":"Be brief."}`},
		{"sample reply in blocks", askSummarise, []json.RawMessage{json.RawMessage(`"x"`)},
			`{"role":"assistant","content":[{"type":"text","text":"sh"},{"type":"image","data":"","mimeType":"image/png"},{"type":"text","text":"ort"}],"model":"m"}`, `"short"`,
			"sample", `{"messages":[{"role":"user","content":{"type":"text","text":"Summarise: x"}}],"maxTokens":50,"systemPrompt":"Be brief."}`},
		{"sample messages", askChat, nil, `{"role":"assistant","content":{"type":"text","text":"bye!"},"model":"m"}`, `"bye!"`,
			"sample", `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}},{"role":"assistant","content":{"type":"text","text":"hello"}},{"role":"user","content":{"type":"text","text":"bye"}}],"maxTokens":10}`},
		{"roots", askRootURIs, nil, `{"roots":[{"uri":"file:///a","name":"A"},{"uri":"file:///b"}]}`, `["file:///a","file:///b"]`,
			"roots", `{}`},
		{"one root", askRootURIs, nil, `{"roots":[{"uri":"file:///only"}]}`, `["file:///only"]`, "roots", `{}`},
		{"no roots", askRootURIs, nil, `{"roots":[]}`, `[]`, "roots", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &askRecorder{answer: answerWith(tt.answer, nil)}
			got, err := callAsk(t, s, tt.mid, tt.args, Hooks{Ask: rec.hook})
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if !sameJSON(t, got, []byte(tt.want)) {
				t.Errorf("result %s, want %s", got, tt.want)
			}
			asks := rec.recorded()
			if len(asks) != 1 {
				t.Fatalf("the hook got %d asks, want 1", len(asks))
			}
			if asks[0].kind != tt.wantKind || !sameJSON(t, asks[0].params, []byte(tt.wantParams)) {
				t.Errorf("the hook got %s %s, want %s %s", asks[0].kind, asks[0].params, tt.wantKind, tt.wantParams)
			}
		})
	}
}

func testAskErrors(t *testing.T, s *Set, lang string) {
	uncaughtPrefix := map[string]string{"py": "AskError: ", "r": "nexus_ask_error: ", "cpp": ""}[lang]
	tests := []struct {
		name      string
		mid       int
		args      []json.RawMessage
		noHook    bool
		answer    string
		answerErr error
		want      string // the result, when the call succeeds
		wantErr   string // else the call's error
	}{
		{"error answer caught", askCaught, nil, false, "", errors.New("the client does not support elicitation"),
			`"caught: the client does not support elicitation"`, ""},
		{"error answer uncaught", askGreet, nil, false, "", errors.New("the user closed the form"),
			"", uncaughtPrefix + "the user closed the form"},
		{"no Ask hook", askCaught, nil, true, "", nil,
			`"caught: this call cannot ask the client (elicit): it was not made by an MCP client that could answer; the command line and the plain JSON API have no one to ask"`, ""},
		{"an answer that is not an object", askCaught, nil, false, `[1]`, nil,
			`"caught: the client's answer to elicit: not a JSON object"`, ""},
		{"an answer that is not JSON", askCaught, nil, false, `{"action":`, nil, "", ""},
		{"a reply without text", askSummarise, []json.RawMessage{json.RawMessage(`"x"`)}, false,
			`{"role":"assistant","content":{"type":"image","data":"","mimeType":"image/png"},"model":"m"}`, nil, "", "no text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, h := answeringHooks(tt.answer, tt.answerErr, tt.noHook)
			got, err := callAsk(t, s, tt.mid, tt.args, h)
			switch {
			case tt.wantErr != "":
				var ce *CallError
				if !errors.As(err, &ce) || !strings.Contains(ce.Message, tt.wantErr) {
					t.Fatalf("call returned %s, %v; want a CallError with %q", got, err, tt.wantErr)
				}
				if uncaughtPrefix != "" && tt.answerErr != nil && !strings.HasPrefix(ce.Message, uncaughtPrefix) {
					t.Errorf("error %q, want it to begin %q", ce.Message, uncaughtPrefix)
				}
			case tt.want == "":
				// Whatever the runtime says, it says it caught an error.
				if err != nil || !strings.HasPrefix(string(got), `"caught: the client's answer to elicit: `) {
					t.Fatalf("call returned %s, %v; want a caught error about the answer", got, err)
				}
			default:
				if err != nil {
					t.Fatalf("call: %v", err)
				}
				if string(got) != tt.want {
					t.Errorf("result %s,\nwant   %s", got, tt.want)
				}
			}
		})
	}
}

// testAskEndsWithCall cancels (or times out) a call while its function waits
// for an answer: the call ends at once, the hook's context ends, the
// function sees the runtime's cancellation, and the pool serves on.
func testAskEndsWithCall(t *testing.T, s *Set, timeout bool) {
	marker := filepath.Join(t.TempDir(), "marker")
	asked := make(chan struct{})
	hookDone := make(chan error, 1)
	h := Hooks{Ask: func(ctx context.Context, kind, key string, params json.RawMessage) (json.RawMessage, error) {
		close(asked)
		<-ctx.Done()
		hookDone <- ctx.Err()
		return nil, ctx.Err()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := CallOptions{Hooks: h, Name: "waitCancel"}
	if timeout {
		opts.Timeout = time.Second
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.CallWith(ctx, 0, askWaitCancel, rawArgs(t, marker), opts)
		done <- err
	}()
	waitStarted(t, asked, done) // under way once it asks
	if !timeout {
		cancel()
	}
	select {
	case err := <-done:
		var te *TimeoutError
		if timeout && !errors.As(err, &te) {
			t.Fatalf("the call returned %v, want a TimeoutError", err)
		}
		if !timeout && !errors.Is(err, context.Canceled) {
			t.Fatalf("the call returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end")
	}
	select {
	case <-hookDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the hook's context did not end with the call")
	}
	if got := readWhenWritten(marker); string(got) != "cancelled" {
		t.Errorf("the function wrote %q, want \"cancelled\": it did not see the cancel while waiting", got)
	}
	rec := &askRecorder{answer: answerWith(`{"action":"accept","content":{"name":"Bo"}}`, nil)}
	if v, err := callAsk(t, s, askGreet, nil, Hooks{Ask: rec.hook}); err != nil || string(v) != `"Hello, Bo!"` {
		t.Errorf("the next call returned %s, %v", v, err)
	}
}

// TestAskThreads: threads of one call (Python, C++) ask at once and get
// their own answers, whatever order they come in.
func TestAskThreads(t *testing.T) {
	for _, lang := range []string{"py", "cpp"} {
		t.Run(lang, func(t *testing.T) {
			s := startAskPool(t, lang)
			secondAnswered := make(chan struct{})
			hook := func(ctx context.Context, kind, key string, params json.RawMessage) (json.RawMessage, error) {
				var p struct{ Message string }
				if err := json.Unmarshal(params, &p); err != nil {
					return nil, err
				}
				if p.Message == "first" {
					select { // answered last: after the second
					case <-secondAnswered:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				} else {
					defer close(secondAnswered)
				}
				return json.Marshal(map[string]any{"action": "accept", "content": map[string]string{"name": p.Message + "-name"}})
			}
			got, err := callAsk(t, s, askParallel, nil, Hooks{Ask: hook})
			if err != nil {
				t.Fatal(err)
			}
			if want := `["first-name","second-name"]`; string(got) != want {
				t.Errorf("result %s, want %s", got, want)
			}
		})
	}
}

// TestAskPythonMisuse: what a Python function that asks wrongly is told.
func TestAskPythonMisuse(t *testing.T) {
	s := startAskPool(t, "py")
	tests := []struct {
		name string
		mid  int
		want string
	}{
		{"a thread of its own without within_call", askUnboundThread, `"nexus.roots: not in a call: only a function nexus runs can ask the client (on a thread of your own, wrap the work in nexus.within_call)"`},
		{"an unknown kind", askBadKind, `"unknown ask kind \"bogus\" (nexus knows elicit, sample and roots)"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := callAsk(t, s, tt.mid, nil, Hooks{Ask: answerWith(`{}`, nil)})
			if err != nil || string(got) != tt.want {
				t.Errorf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// TestAskWire checks the answer frames nexus writes, with a pool that
// speaks them by hand: an ask for a call not in flight is ignored, and
// each real ask gets exactly one answer, with its id and ask number.
func TestAskWire(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "askwire.py"}}, Options{})
	tests := []struct {
		name      string
		mid       int
		noHook    bool
		answer    string
		answerErr error
		want      string // the answers, with "ID" for the call's id
		wantAsks  []recordedAsk
	}{
		{"result", 1, false, `{"roots":[{"uri":"file:///x"}]}`, nil,
			`[{"type":"answer","id":ID,"ask":1,"result":{"roots":[{"uri":"file:///x"}]}}]`,
			[]recordedAsk{{"roots", json.RawMessage(`{}`)}}},
		{"error", 2, false, "", errors.New(`declined "politely"`),
			`[{"type":"answer","id":ID,"ask":1,"error":"declined \"politely\""}]`,
			[]recordedAsk{{"elicit", json.RawMessage(`{"message":"m","requestedSchema":{"type":"object"}}`)}}},
		{"no hook", 2, true, "", nil,
			`[{"type":"answer","id":ID,"ask":1,"error":"this call cannot ask the client (elicit): it was not made by an MCP client that could answer; the command line and the plain JSON API have no one to ask"}]`,
			nil},
		{"unknown kind", 3, false, `{}`, nil,
			`[{"type":"answer","id":ID,"ask":1,"error":"unknown ask kind \"bogus\" (nexus knows elicit, sample and roots)"}]`,
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, h := answeringHooks(tt.answer, tt.answerErr, tt.noHook)
			got, err := callAsk(t, ts.Set, tt.mid, nil, h)
			if err != nil {
				t.Fatal(err)
			}
			var answers []map[string]any
			if err := json.Unmarshal(got, &answers); err != nil || len(answers) == 0 {
				t.Fatalf("answers %s: %v", got, err)
			}
			id, _ := json.Marshal(answers[0]["id"])
			want := strings.ReplaceAll(tt.want, "ID", string(id))
			if !sameJSON(t, got, []byte(want)) {
				t.Errorf("answers %s,\nwant    %s", got, want)
			}
			asks := rec.recorded()
			if len(asks) != len(tt.wantAsks) {
				t.Fatalf("the hook got %d asks, want %d: %v", len(asks), len(tt.wantAsks), asks)
			}
			for i, a := range asks {
				if a.kind != tt.wantAsks[i].kind || !sameJSON(t, a.params, tt.wantAsks[i].params) {
					t.Errorf("ask %d: %s %s, want %s %s", i, a.kind, a.params, tt.wantAsks[i].kind, tt.wantAsks[i].params)
				}
			}
		})
	}
}

func TestDecodeAsk(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		wantErr bool
	}{
		{"whole", `{"type":"ask","id":17,"ask":1,"kind":"elicit","params":{"message":"m"}}`, false},
		{"without params", `{"type":"ask","id":17,"ask":2,"kind":"roots"}`, false},
		{"without id", `{"type":"ask","ask":1,"kind":"roots"}`, true},
		{"without ask", `{"type":"ask","id":17,"kind":"roots"}`, true},
		{"ask not an integer", `{"type":"ask","id":17,"ask":"1","kind":"roots"}`, true},
		{"without kind", `{"type":"ask","id":17,"ask":1}`, true},
		{"another message's ask member is ignored", `{"type":"log","level":"info","data":1,"ask":"x"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := decodeInbound([]byte(tt.payload))
			if (err != nil) != tt.wantErr {
				t.Fatalf("decodeInbound(%s) error %v, want error %v", tt.payload, err, tt.wantErr)
			}
			if err == nil && m.Type == typeAsk && (m.Kind == "" || *m.Ask < 1) {
				t.Errorf("decoded %+v", m)
			}
		})
	}
}

func TestAppendAnswer(t *testing.T) {
	tests := []struct {
		name   string
		result string
		err    error
		want   string
	}{
		{"result", `{"action":"accept"}`, nil, `{"type":"answer","id":17,"ask":3,"result":{"action":"accept"}}`},
		{"error", "", errors.New("no \"elicitation\" capability\n"), `{"type":"answer","id":17,"ask":3,"error":"no \"elicitation\" capability\n"}`},
		{"error not UTF-8", "", errors.New("bad \xff byte"), `{"type":"answer","id":17,"ask":3,"error":"bad \ufffd byte"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := appendAnswer(17, 3, json.RawMessage(tt.result), tt.err)
			if string(got[frameHeader:]) != tt.want {
				t.Errorf("got  %s\nwant %s", got[frameHeader:], tt.want)
			}
		})
	}
}

// TestAskRQueuesCalls: while an R call waits for its answer, the runtime
// keeps reading: a call that arrives meanwhile waits its turn and runs
// after, and one cancelled meanwhile is answered cancelled without running.
func TestAskRQueuesCalls(t *testing.T) {
	testenv.Long(t)
	s := startAskPool(t, "r")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	type outcome struct {
		v   json.RawMessage
		err error
	}
	queued := make(chan outcome, 1)
	dropped := make(chan outcome, 1)
	dropCtx, drop := context.WithCancel(ctx)
	defer drop()
	answer := func(name string) Hooks {
		return Hooks{Ask: answerWith(`{"action":"accept","content":{"name":"`+name+`"}}`, nil)}
	}
	first := Hooks{Ask: func(context.Context, string, string, json.RawMessage) (json.RawMessage, error) {
		// Two more calls reach the pool while this one waits for its answer.
		go func() {
			v, err := s.Call(ctx, 0, askGreet, nil, answer("second"))
			queued <- outcome{v, err}
		}()
		go func() {
			v, err := s.Call(dropCtx, 0, askGreet, nil, answer("dropped"))
			dropped <- outcome{v, err}
		}()
		time.Sleep(300 * time.Millisecond)
		drop()
		time.Sleep(300 * time.Millisecond)
		return json.RawMessage(`{"action":"accept","content":{"name":"first"}}`), nil
	}}
	v, err := s.Call(ctx, 0, askGreet, nil, first)
	if err != nil || string(v) != `"Hello, first!"` {
		t.Fatalf("first call: %s, %v", v, err)
	}
	if o := <-queued; o.err != nil || string(o.v) != `"Hello, second!"` {
		t.Errorf("the call that came while the first waited: %s, %v", o.v, o.err)
	}
	if o := <-dropped; !errors.Is(o.err, context.Canceled) {
		t.Errorf("the call cancelled while queued: %s, %v; want context.Canceled", o.v, o.err)
	}
	if v, err := s.Call(ctx, 0, askGreet, nil, answer("last")); err != nil || string(v) != `"Hello, last!"` {
		t.Errorf("the call after: %s, %v", v, err)
	}
}
