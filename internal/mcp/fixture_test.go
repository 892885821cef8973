package mcp

// The tests' fixture: fakePool, which plays the functions of every test
// manifest in place of the pools, the manifests that serve them as tools
// (one per concern: plain calls, questions, tasks, questions before a
// task), and the server that joins the two.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// remote is one command of a fixture manifest, a function of fakePool.
type remote struct {
	name, desc string
	args       []string // its arguments, each as arg writes it
	ret        string   // its return type, as returns writes it
	metadata   string   // its metadata object, or ""
}

// arg is a positional argument of a command.
func arg(schema, typ, desc string) string {
	return fmt.Sprintf(`{"kind":"pos","schema":%s,"type":%s,"name":null,"desc":[%s]}`, jsonString(schema), jsonString(typ), jsonString(desc))
}

// named is a positional argument with a name.
func named(schema, typ, name string) string {
	return fmt.Sprintf(`{"kind":"pos","schema":%s,"type":%s,"name":%s,"desc":[%s]}`, jsonString(schema), jsonString(typ), jsonString(name), jsonString(name))
}

// returns is a command's return type.
func returns(schema, typ string) string {
	return fmt.Sprintf(`{"schema":%s,"type":%s,"desc":[]}`, jsonString(schema), jsonString(typ))
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// fixtureManifest is the manifest of a program named name with one Python
// pool whose functions are commands, mids from 1 in the order given.
func fixtureManifest(name string, commands ...remote) string {
	entries := make([]string, len(commands))
	for i, c := range commands {
		entries[i] = fmt.Sprintf(`{"name":%s,"type":"remote","mid":%d,"pool":0,"needed_pools":[0],"desc":[%s],"args":[%s],"return":%s`,
			jsonString(c.name), i+1, jsonString(c.desc), strings.Join(c.args, ","), c.ret)
		if c.metadata != "" {
			entries[i] += `,"metadata":` + c.metadata
		}
		entries[i] += "}"
	}
	return `{"name":` + jsonString(name) + `,"build":{"morloc_version":"1.2.3"},"pools":[{"lang":"py","exec":["python3","pool.py"],"metadata":{"runtime":"nexus"}}],` +
		"\n" + `"commands":[` + strings.Join(entries, ",\n") + `]}`
}

var (
	intRet, strRet = returns("j", "Int"), returns("s", "Str")
	intArg         = arg("j", "Int", "n")
)

// testManifest has one command per plain behaviour: a value, a record,
// waiting for cancellation, progress and logs, an error, content blocks,
// a timeout.
var testManifest = fixtureManifest("t",
	remote{"add", "Add one", []string{intArg}, intRet, `{"title":"Add One","readOnlyHint":true,"idempotentHint":true}`},
	remote{"rec", "A record", nil, returns("m24names3agej", "Person"), ""},
	remote{"slow", "Wait until cancelled", nil, intRet, ""},
	remote{"steps", "Report progress", []string{arg("aj", "[Int]", "progress values")}, intRet, ""},
	remote{"boom", "Fail", nil, intRet, ""},
	remote{"pic", "Content blocks", nil, intRet, ""},
	remote{"late", "Time out", nil, intRet, ""},
)

// askManifest has functions that put questions to the client through
// CallHooks.Ask.
var askManifest = fixtureManifest("t",
	remote{"greet", "Ask a name", []string{arg("s", "Str", "prompt")}, strRet, ""},
	remote{"all3", "Ask three things at once", nil, strRet, ""},
	remote{"rounds", "Ask twice in turn", nil, strRet, ""},
	remote{"polite", "Ask what the client can answer", nil, strRet, ""},
)

const (
	optionalTask = `{"taskSupport":"optional"}`
	requiredTask = `{"taskSupport":"required"}`
)

// taskManifest has a tool for each task behaviour.
var taskManifest = fixtureManifest("t",
	remote{"add", "Add one, no task", []string{intArg}, intRet, ""},
	remote{"work", "Add one once released", []string{intArg}, intRet, optionalTask},
	remote{"must", "Only as a task", nil, intRet, requiredTask},
	remote{"slow", "Wait until cancelled", nil, intRet, optionalTask},
	remote{"raises", "The function raises", nil, intRet, optionalTask},
	remote{"crash", "The pool dies", nil, intRet, optionalTask},
	remote{"asker", "Ask twice at once", nil, strRet, optionalTask},
)

// composeManifest has "taskInput":"before" tools (taskinput.go) and one
// that asks from inside its task, for contrast.
var composeManifest = fixtureManifest("c",
	remote{"hello", "Ask a name, work, greet", nil, strRet, `{"taskSupport":"optional","taskInput":"before"}`},
	remote{"quick", "Ask a name, greet at once", nil, strRet, `{"taskSupport":"required","taskInput":"before"}`},
	remote{"two", "Ask twice, one after the other", nil, strRet, `{"taskSupport":"required","taskInput":"before"}`},
	remote{"ask_late", "Work, then ask", nil, strRet, `{"taskSupport":"required","taskInput":"before"}`},
	remote{"during", "Ask from inside the task", nil, strRet, `{"taskSupport":"required","taskInput":"during"}`},
)

// confirmManifest: confirm takes an integer, a string and a record, asks
// one question, and answers with the arguments it ran with; nothing takes
// no arguments and asks too.
var confirmManifest = fixtureManifest("t",
	remote{"confirm", "Ask, then echo", []string{named("j", "Int", "n"), named("s", "Str", "s"), named("m21aaj1bf8", "Opts", "opts")}, strRet, ""},
	remote{"nothing", "Ask, no arguments", nil, strRet, ""},
)

func testTools(t testing.TB) []*argmap.Tool { return toolsOf(t, testManifest) }

func toolsOf(t testing.TB, manifestJSON string) []*argmap.Tool {
	t.Helper()
	m, err := manifest.Parse("/test/manifest.json", []byte(manifestJSON))
	if err != nil {
		t.Fatal(err)
	}
	tools, excl := argmap.Tools(m)
	if len(excl) != 0 {
		t.Fatalf("exclusions: %v", excl)
	}
	return tools
}

// newFixtureServer serves the tools of manifestJSON, named after it, with
// pool playing them; its tasks stop when the test ends.
func newFixtureServer(t testing.TB, manifestJSON string, pool Caller, opts Options) *Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	var m struct{ Name string }
	if err := json.Unmarshal([]byte(manifestJSON), &m); err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Implementation{Name: m.Name, Version: "1.2.3"}, toolsOf(t, manifestJSON), pool, opts)
	t.Cleanup(srv.CloseTasks)
	return srv
}

func newTestServer(t testing.TB, pool Caller, opts Options) *Server {
	return newFixtureServer(t, testManifest, pool, opts)
}

func newAskServer(t *testing.T, opts Options) (*Server, *fakePool) {
	p := newFakePool()
	return newFixtureServer(t, askManifest, p, opts), p
}

func newTaskServer(t *testing.T, pool Caller, opts Options) *Server {
	return newFixtureServer(t, taskManifest, pool, opts)
}

// composeSettle is the compose tests' settle time: long against a
// goroutine's next question, short for the test's run time.
const composeSettle = 200 * time.Millisecond

func newComposeServer(t *testing.T, pool *fakePool) *Server {
	return newFixtureServer(t, composeManifest, pool, Options{TaskInputSettle: composeSettle})
}

// fakePool plays the functions of every fixture manifest, by command name.
// Those that wait for the test (work, hello, ask_late) wait until it
// closes release; slow waits for its cancellation.
type fakePool struct {
	release chan struct{} // made by newFakePool
	started chan string   // receives a command name as each call starts (if set)

	mu        sync.Mutex
	runs      map[string]int // calls by command name (MRTR runs a function again)
	cancelled int            // calls that saw their cancellation
}

func newFakePool() *fakePool { return &fakePool{release: make(chan struct{})} }

func (p *fakePool) Call(ctx context.Context, c argmap.Call, h CallHooks) (ndarray.Value, error) {
	name := c.Command.Name
	p.mu.Lock()
	if p.runs == nil {
		p.runs = map[string]int{}
	}
	p.runs[name]++
	p.mu.Unlock()
	args, err := c.JSONArgs()
	if err != nil {
		return ndarray.Value{}, err
	}
	if p.started != nil {
		p.started <- name
	}
	v, err := p.play(ctx, name, args, h)
	return ndarray.Value{JSON: v}, err
}

// count is how many times the function name ran; total, all of them.
func (p *fakePool) count(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs[name]
}

func (p *fakePool) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, runs := range p.runs {
		n += runs
	}
	return n
}

func (p *fakePool) cancels() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cancelled
}

// cancelledBy counts a call that saw its cancellation, and returns why.
func (p *fakePool) cancelledBy(ctx context.Context) error {
	p.mu.Lock()
	p.cancelled++
	p.mu.Unlock()
	return ctx.Err()
}

// wait waits until the test releases the pool, or the call is cancelled.
func (p *fakePool) wait(ctx context.Context) error {
	select {
	case <-p.release:
		return nil
	case <-ctx.Done():
		return p.cancelledBy(ctx)
	}
}

// picBlocks are the content blocks pic answers with.
const picBlocks = `[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"},{"type":"text","text":"a plot"}]`

type timeoutError struct{}

func (timeoutError) Error() string { return "call to 'late' timed out after 1s" }
func (timeoutError) Timeout() bool { return true }

// raised is a function's own error (as pool.CallError says it).
type raised struct{ msg string }

func (e raised) Error() string        { return e.msg }
func (e raised) FunctionFailed() bool { return true }

func (p *fakePool) play(ctx context.Context, name string, args []json.RawMessage, h CallHooks) (json.RawMessage, error) {
	switch name {
	case "add", "work":
		if name == "work" {
			if err := p.wait(ctx); err != nil {
				return nil, err
			}
		}
		var n int
		if err := json.Unmarshal(args[0], &n); err != nil {
			return nil, err
		}
		return json.RawMessage(fmt.Sprint(n + 1)), nil
	case "rec":
		return json.RawMessage(`{"name":"Ada","age":36}`), nil
	case "slow":
		<-ctx.Done()
		return nil, p.cancelledBy(ctx)
	case "steps":
		var steps []float64
		if err := json.Unmarshal(args[0], &steps); err != nil {
			return nil, err
		}
		total := 10.0
		for _, s := range steps {
			if h.Progress != nil {
				h.Progress(s, &total, fmt.Sprintf("at %g", s))
			}
		}
		if h.Log != nil {
			h.Log("info", json.RawMessage(`{"note":"quiet"}`))
			h.Log("error", json.RawMessage(`"loud"`))
		}
		return json.RawMessage(fmt.Sprint(len(steps))), nil
	case "boom":
		return nil, errors.New("ValueError: boom")
	case "pic":
		h.Content(json.RawMessage(picBlocks))
		return json.RawMessage(`null`), nil
	case "late":
		return nil, fmt.Errorf("pool py: %w", timeoutError{})
	case "must":
		return json.RawMessage("7"), nil
	case "raises":
		return nil, raised{"ValueError: no"}
	case "crash":
		return nil, errors.New("pool py died (exit status 1)")
	case "asker":
		return asker(ctx, h)
	case "greet", "all3", "rounds", "polite":
		if h.Ask == nil {
			return nil, errors.New("no Ask hook")
		}
		return asks(ctx, name, args, h)
	case "hello", "quick", "during", "two", "ask_late":
		return p.compose(ctx, name, h)
	case "confirm", "nothing":
		return confirm(ctx, args, h)
	}
	return nil, fmt.Errorf("no function %s", name)
}

const nameSchema = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`

// askName asks the user's name under key: the name, or the action when
// the user does not accept.
func askName(ctx context.Context, h CallHooks, key, message string) (string, error) {
	params, _ := json.Marshal(map[string]any{"message": message, "requestedSchema": json.RawMessage(nameSchema)})
	res, err := h.Ask(ctx, Question{Kind: "elicit", Key: key, Params: params})
	if err != nil {
		return "", err
	}
	var r struct {
		Action  string `json:"action"`
		Content struct {
			Name string `json:"name"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return "", err
	}
	if r.Action != "accept" {
		return r.Action, nil
	}
	return r.Content.Name, nil
}

// asker asks two questions at once and answers with both replies.
func asker(ctx context.Context, h CallHooks) (json.RawMessage, error) {
	var wg sync.WaitGroup
	answers := make([]string, 2)
	for i := range answers {
		wg.Go(func() {
			a, err := h.Ask(ctx, Question{Kind: "elicit", Params: json.RawMessage(fmt.Sprintf(`{"message":"question %d","requestedSchema":{"type":"object"}}`, i+1))})
			if err != nil {
				answers[i] = "error: " + err.Error()
				return
			}
			answers[i] = string(a)
		})
	}
	wg.Wait()
	return json.RawMessage(jsonString(strings.Join(answers, " | "))), nil
}

// asks plays askManifest's functions.
func asks(ctx context.Context, name string, args []json.RawMessage, h CallHooks) (json.RawMessage, error) {
	text := func(s string) (json.RawMessage, error) { return json.RawMessage(jsonString(s)), nil }
	switch name {
	case "greet":
		var prompt string
		_ = json.Unmarshal(args[0], &prompt)
		name, err := askName(ctx, h, "", prompt)
		if err != nil {
			return nil, fmt.Errorf("AskError: %w", err)
		}
		return text("Hello, " + name + "!")
	case "all3":
		// Three questions from three threads, as a function may ask.
		var wg sync.WaitGroup
		out := make([]string, 3)
		errs := make([]error, 3)
		wg.Go(func() { out[0], errs[0] = askName(ctx, h, "user_name", "What is your name?") })
		wg.Go(func() {
			res, err := h.Ask(ctx, Question{Kind: "sample", Key: "greeting", Params: json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"Generate a greeting"}}],"maxTokens":50}`)})
			out[1], errs[1] = string(res), err
		})
		wg.Go(func() {
			res, err := h.Ask(ctx, Question{Kind: "roots", Key: "client_roots", Params: json.RawMessage(`{}`)})
			out[2], errs[2] = string(res), err
		})
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		return text(strings.Join(out, "|"))
	case "rounds":
		a, err := askName(ctx, h, "step1", "Step 1")
		if err != nil {
			return nil, err
		}
		b, err := askName(ctx, h, "step2", "Step 2 for "+a)
		if err != nil {
			return nil, err
		}
		return text(a + "+" + b)
	}
	// polite: elicit if the client can, then sample: a client that
	// declared only sampling gets the sampling question alone.
	name, err := askName(ctx, h, "name", "Name?")
	var ae *AskError
	if errors.As(err, &ae) {
		name = "(" + ae.Message + ")"
	} else if err != nil {
		return nil, err
	}
	res, err := h.Ask(ctx, Question{Kind: "sample", Key: "poem", Params: json.RawMessage(`{"messages":[],"maxTokens":5}`)})
	if err != nil {
		return nil, err
	}
	return text(name + " " + string(res))
}

// confirm asks "Go on?" under the key "go", then returns the arguments it
// got, joined.
func confirm(ctx context.Context, args []json.RawMessage, h CallHooks) (json.RawMessage, error) {
	if _, err := h.Ask(ctx, Question{Kind: "elicit", Key: "go", Params: json.RawMessage(`{"message":"Go on?","requestedSchema":{"type":"object","properties":{}}}`)}); err != nil {
		return nil, err
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = string(a)
	}
	return json.RawMessage(jsonString(strings.Join(parts, " "))), nil
}

// compose plays composeManifest's functions: each asks for names; hello
// and ask_late wait for release before they go on.
func (p *fakePool) compose(ctx context.Context, name string, h CallHooks) (json.RawMessage, error) {
	var text string
	switch name {
	case "hello", "quick", "during":
		who, err := askName(ctx, h, "user_name", "user_name?")
		if err != nil {
			return nil, err
		}
		if name == "hello" {
			if err := p.wait(ctx); err != nil {
				return nil, err
			}
		}
		text = "Hello, " + who
	case "two":
		first, err := askName(ctx, h, "first", "first?")
		if err != nil {
			return nil, err
		}
		second, err := askName(ctx, h, "second", "second?")
		if err != nil {
			return nil, err
		}
		text = first + " and " + second
	case "ask_late":
		if h.Progress != nil {
			h.Progress(1, nil, "")
		}
		if err := p.wait(ctx); err != nil {
			return nil, err
		}
		if h.Progress != nil {
			h.Progress(2, nil, "") // after the handover: no stream to go to
		}
		who, err := askName(ctx, h, "confirm", "confirm?")
		if err != nil {
			return nil, err
		}
		text = "late " + who
	}
	return json.RawMessage(jsonString(text)), nil
}
