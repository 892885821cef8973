package program

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/eval"
	"github.com/nexus-mcp/nexus/internal/mcp"
	"github.com/nexus-mcp/nexus/internal/ndarray"
	"github.com/nexus-mcp/nexus/internal/pool"
	"github.com/nexus-mcp/nexus/internal/testenv"
)

// fakePools stands for a program's pools: it records each call and answers
// with reply.
type fakePools struct {
	mu    sync.Mutex
	calls []fakeCall
	reply ndarray.Value
}

type fakeCall struct {
	pool, mid int
	args      []json.RawMessage
	opts      pool.CallOptions
}

func (f *fakePools) CallWith(_ context.Context, p, mid int, args []json.RawMessage, opts pool.CallOptions) (ndarray.Value, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fakeCall{p, mid, args, opts})
	return f.reply, nil
}

func (f *fakePools) Ready(context.Context) error { return nil }

// rendered is a result as the CLI prints it.
func rendered(t *testing.T, call argmap.Call, v ndarray.Value) string {
	t.Helper()
	out, err := argmap.CLIResultValue(&call.Command.Return, v)
	if err != nil {
		t.Fatalf("rendering %s: %v", v.JSON, err)
	}
	return string(out)
}

// The one dispatch: a pure command evaluated in nexus, with no pool, any
// other sent to its pool with the call's hooks.
func TestCallerDispatch(t *testing.T) {
	pure := load(t, exampleProgram("pure"))
	pureCaller, stop := pure.Start(&Options{})
	defer stop()
	if pureCaller.pools != nil {
		t.Fatal("a program whose commands are all pure started pools")
	}
	shapes := load(t, exampleProgram("shapes"))
	addInt := command(t, shapes.Manifest, "addInt")

	tests := []struct {
		name   string
		caller *Caller
		call   argmap.Call
		hooks  mcp.CallHooks
		check  func(t *testing.T, call argmap.Call, v ndarray.Value, err error)
	}{
		{name: "pure, no argument", caller: pureCaller, call: pureGolden(t, pure, 1, "letSimpleInt", "letSimpleInt"),
			check: wantGoldenValue(golden(t, 1, "letSimpleInt", "letSimpleInt"))},
		{name: "pure, an argument", caller: pureCaller, call: pureGolden(t, pure, 3, "letWithArg", "letWithArg"),
			check: wantGoldenValue(golden(t, 3, "letWithArg", "letWithArg"))},
		{name: "pure, a thrown error", caller: pureCaller, call: pureGolden(t, pure, 16, "pureThrow", "pureThrow"),
			check: func(t *testing.T, _ argmap.Call, _ ndarray.Value, err error) {
				var ee *eval.Error
				if want := golden(t, 16, "pureThrow", "pureThrow").ExpectError; !errors.As(err, &ee) || ee.Msg != want {
					t.Errorf("error %v, want the evaluator's %q", err, want)
				}
			}},
		{name: "pure, refused", caller: pureCaller, call: pureGolden(t, pure, 24, "binInt", "binInt"),
			check: func(t *testing.T, _ argmap.Call, _ ndarray.Value, err error) {
				var r *pureRefusal
				if want := golden(t, 24, "binInt", "binInt").Refusal; !errors.As(err, &r) || !strings.Contains(err.Error(), "pure command 'binInt' uses "+want) {
					t.Errorf("error %v, want a refusal naming %q", err, want)
				}
			}},
		{name: "pool, no pool started", caller: &Caller{m: shapes.Manifest, pure: shapes.pure}, call: jsonArgs(addInt, json.RawMessage("41")),
			check: func(t *testing.T, _ argmap.Call, _ ndarray.Value, err error) {
				if err == nil || !strings.Contains(err.Error(), "needs a pool") {
					t.Errorf("error %v, want one saying the command needs a pool", err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tt.caller.Call(context.Background(), tt.call, tt.hooks)
			tt.check(t, tt.call, v, err)
		})
	}
}

// pureGolden is the call of a golden fixture's command, by its name in
// testdata/pure.
func pureGolden(t *testing.T, p *Program, n int, name, prog string) argmap.Call {
	g := golden(t, n, name, prog)
	return jsonArgs(command(t, p.Manifest, prog), g.Call...)
}

func wantGoldenValue(g goldenCase) func(*testing.T, argmap.Call, ndarray.Value, error) {
	return func(t *testing.T, call argmap.Call, v ndarray.Value, err error) {
		if err != nil {
			t.Fatalf("%s: %v", g.Name, err)
		}
		if got := rendered(t, call, v); got != *g.Expect {
			t.Errorf("%s = %s, want morloc's %s", g.Name, got, *g.Expect)
		}
	}
}

// A pool call carries the call's hooks to the pool: its questions as MCP
// questions, its inline wait; and hands its arrays over.
func TestCallerPoolHooks(t *testing.T) {
	shapes := load(t, exampleProgram("shapes"))
	fake := &fakePools{reply: ndarray.Value{JSON: json.RawMessage("7")}}
	c := &Caller{m: shapes.Manifest, pure: shapes.pure, pools: fake}
	var asked mcp.Question
	hooks := mcp.CallHooks{
		Ask: func(_ context.Context, q mcp.Question) (json.RawMessage, error) {
			asked = q
			return json.RawMessage(`{"ok":true}`), nil
		},
		Inline: &mcp.InlineWait{Fd: 9, Yield: func() bool { return true }},
	}
	call := jsonArgs(command(t, shapes.Manifest, "addInt"), json.RawMessage("41"))
	v, err := c.Call(context.Background(), call, hooks)
	if err != nil || string(v.JSON) != "7" {
		t.Fatalf("Call = %s, %v; want the pool's reply 7", v.JSON, err)
	}
	if len(fake.calls) != 1 {
		t.Fatalf("%d pool calls, want 1", len(fake.calls))
	}
	got := fake.calls[0]
	cmd := call.Command
	if got.pool != cmd.Pool || got.mid != cmd.Mid || len(got.args) != 1 || string(got.args[0]) != "41" {
		t.Errorf("pool call (pool %d, mid %d, args %s), want pool %d, mid %d, args [41]", got.pool, got.mid, got.args, cmd.Pool, cmd.Mid)
	}
	if !got.opts.GiveArrays || got.opts.Inline == nil || got.opts.Inline.Fd != 9 {
		t.Errorf("call options %+v: want the arrays given and the inline wait on fd 9", got.opts)
	}
	if got.opts.Hooks.Ask == nil {
		t.Fatal("the pool got no Ask hook")
	}
	reply, err := got.opts.Hooks.Ask(context.Background(), "elicit", "k1", json.RawMessage(`{"message":"?"}`))
	if err != nil || string(reply) != `{"ok":true}` || asked.Kind != "elicit" || asked.Key != "k1" || string(asked.Params) != `{"message":"?"}` {
		t.Errorf("Ask passed %+v and returned %s, %v", asked, reply, err)
	}

	// A pure command yields stdin before it is evaluated: it does not
	// watch it.
	yielded := false
	hooks.Inline = &mcp.InlineWait{Fd: 9, Yield: func() bool { yielded = true; return true }}
	if _, err := c.Call(context.Background(), argmap.Call{Command: command(t, shapes.Manifest, "pureAnswer")}, hooks); err != nil {
		t.Fatal(err)
	}
	if !yielded || len(fake.calls) != 1 {
		t.Errorf("pure call: yielded %v, pool calls %d; want stdin yielded and no pool call", yielded, len(fake.calls))
	}
}

// Through real pools: testdata/shapes' Python pool (testdata/README.md
// gives its functions' answers).
func TestCallerRealPool(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		testenv.MissingTool(t, "python3 runs testdata/shapes' pool")
	}
	shapes := load(t, exampleProgram("shapes"))
	o := &Options{StartTimeout: DefaultStartTimeout, Timeout: DefaultCallTimeout, OutputDir: t.TempDir()}
	c, stop := shapes.Start(o)
	defer stop()
	ctx := context.Background()

	call := cliCall(t, shapes.Manifest, "addInt", "41")
	v, err := c.Call(ctx, call, mcp.CallHooks{})
	if err != nil || rendered(t, call, v) != "42" {
		t.Errorf("addInt 41 = %s, %v; want 42", v.JSON, err)
	}

	var steps []float64
	call = cliCall(t, shapes.Manifest, "progressSteps", "3")
	v, err = c.Call(ctx, call, mcp.CallHooks{Progress: func(p float64, _ *float64, _ string) { steps = append(steps, p) }})
	if err != nil || rendered(t, call, v) != "3" || len(steps) != 3 {
		t.Errorf("progressSteps 3 = %s, %v, progress %v; want 3 and three steps", v.JSON, err, steps)
	}

	call = cliCall(t, shapes.Manifest, "fail", "oops")
	if _, err = c.Call(ctx, call, mcp.CallHooks{}); err == nil || !strings.Contains(err.Error(), "boom: oops") {
		t.Errorf("fail oops: error %v, want the function's boom: oops", err)
	}

	call = argmap.Call{Command: command(t, shapes.Manifest, "pureAnswer")}
	if v, err = c.Call(ctx, call, mcp.CallHooks{}); err != nil || rendered(t, call, v) != "42" {
		t.Errorf("pureAnswer = %s, %v; want 42, evaluated in nexus", v.JSON, err)
	}
}
