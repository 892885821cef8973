package pool

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// startRawPool runs testdata/pools/pool.py with the Python runtime.
func startRawPool(t *testing.T) *rawPool {
	t.Helper()
	testenv.NeedPython(t)
	return startRawProcess(t, &rawPool{recvWait: 20 * time.Second, exitWait: 10 * time.Second},
		"py", testdataDir(t), []string{"python3", "pool.py"}, nil)
}

func TestPythonReady(t *testing.T) {
	p := startRawPool(t)
	got := p.recv(t)
	mids := p.mids(testPoolMids)
	want := map[string]any{"type": "ready", "protocol": float64(2), "lang": "py", "pid": float64(p.cmd.Process.Pid), "mids": mids, "concurrent": true,
		"arrays": []any{"i4", "i8", "f8"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ready = %v, want %v", got, want)
	}
}

func TestPythonCallFrames(t *testing.T) {
	p := startRawPool(t)
	p.recv(t) // ready
	// Unknown types and members are ignored; the id comes back exactly.
	p.send(t, `{"type":"greeting","from":"a newer nexus"}`)
	p.send(t, `{"type":"call","id":9007199254740993,"mid":1,"args":[1],"progress":false,"deadline":5}`)
	if got, want := p.recv(t), map[string]any{"type": "result", "id": 9007199254740993.0, "value": 2.0}; !reflect.DeepEqual(got, want) {
		t.Errorf("reply %v, want %v", got, want)
	}
	// Progress frames come before the result, for a call that asked.
	p.send(t, `{"type":"call","id":2,"mid":8,"args":[2],"progress":true}`)
	var frames []map[string]any
	for range 3 {
		frames = append(frames, p.recv(t))
	}
	want := []map[string]any{
		{"type": "progress", "id": 2.0, "progress": 1.0, "total": 2.0, "message": "step 1"},
		{"type": "progress", "id": 2.0, "progress": 2.0, "total": 2.0, "message": "step 2"},
		{"type": "result", "id": 2.0, "value": 2.0},
	}
	if !reflect.DeepEqual(frames, want) {
		t.Errorf("frames %v, want %v", frames, want)
	}
	// Cancelling a finished call is ignored; the pool keeps answering.
	p.send(t, `{"type":"cancel","id":2}`)
	p.send(t, `{"type":"call","id":3,"mid":2,"args":["ab"]}`)
	if got := p.recv(t); got["id"] != 3.0 || got["value"] != "ba" {
		t.Errorf("reply %v, want ba for id 3", got)
	}
}

// startReadyRawPool is startRawPool past the pool's ready message.
func startReadyRawPool(t *testing.T) *rawPool {
	p := startRawPool(t)
	p.recv(t) // ready
	return p
}

func TestPythonExit(t *testing.T) {
	testExits(t, startReadyRawPool, "", []exitCase{
		{"end of file", func(p *rawPool, t *testing.T) { p.in.Close() }, 0, ""},
		{"shutdown", func(p *rawPool, t *testing.T) { p.send(t, `{"type":"shutdown"}`) }, 0, ""},
		{"shutdown with a call running", func(p *rawPool, t *testing.T) {
			p.send(t, `{"type":"call","id":1,"mid":4,"args":["/nonexistent/never","x"]}`)
			p.send(t, `{"type":"shutdown"}`)
		}, 0, ""},
		{"bad frame length", func(p *rawPool, t *testing.T) { p.in.Write([]byte{0, 0, 0, 1, '1'}) }, 2, "nexus pool: protocol error: frame length 1 is outside"},
		{"not an object", func(p *rawPool, t *testing.T) { p.send(t, `[1,2]`) }, 2, "nexus pool: protocol error: a message is not an object with a type"},
		{"args not an array", func(p *rawPool, t *testing.T) { p.send(t, `{"type":"call","id":1,"mid":1,"args":5}`) }, 2, "args is not an array"},
		{"cut frame", func(p *rawPool, t *testing.T) { p.in.Write([]byte{0, 0, 0, 9, '{'}); p.in.Close() }, 2, "end of file inside a frame of 9 bytes"},
		// A body over the 16 MiB chunk is read in two steps: cut in either.
		{"large blob cut in its first chunk", func(p *rawPool, t *testing.T) { cutBlob(p, 20<<20, 1<<20) }, 2, "end of file inside a frame of 20971520 bytes"},
		{"large blob cut after its first chunk", func(p *rawPool, t *testing.T) { cutBlob(p, 20<<20, 17<<20) }, 2, "end of file inside a frame of 20971520 bytes"},
	})
}

// cutBlob writes the header of a blob of n bytes, then only sent of them,
// and closes the pipe.
func cutBlob(p *rawPool, n, sent int) {
	p.in.Write([]byte{0x80 | byte(n>>24), byte(n >> 16), byte(n >> 8), byte(n)})
	p.in.Write(make([]byte, sent))
	p.in.Close()
}

// intCall runs a call of arrays.py that returns an integer.
func intCall(t *testing.T, ts *testSet, mid int, args ...any) int {
	t.Helper()
	v, err := ts.CallWith(context.Background(), 0, mid, rawArgs(t, args...), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := json.Unmarshal(v.JSON, &n); err != nil {
		t.Fatalf("%s: %v", v.JSON, err)
	}
	return n
}

// Calls one after another run on one reused thread; calls at once get
// threads of their own, which go when idle.
func TestPythonReusesThreads(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "arrays.py"}}, Options{})
	before := intCall(t, ts, arrThreads)
	for i := range 200 {
		if got := intCall(t, ts, arrSleepMS, i%2); got != i%2 {
			t.Fatalf("sleep_ms(%d) = %d", i%2, got)
		}
	}
	if after := intCall(t, ts, arrThreads); after != before || before != 2 {
		t.Errorf("threads: %d before 200 calls, %d after; want 2 (the reader and one worker) both times", before, after)
	}

	// 32 calls that each wait for all 32 to be running.
	const n = 32
	var wg sync.WaitGroup
	results := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := ts.CallWith(context.Background(), 0, arrGather, rawArgs(t, n), CallOptions{})
			if err != nil {
				results[i] = err.Error()
				return
			}
			results[i] = string(v.JSON)
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r != `"together"` {
			t.Errorf("gather %d: %s", i, r)
		}
	}
	if got := intCall(t, ts, arrThreads); got < n+1 {
		t.Errorf("%d threads right after %d calls at once, want at least %d", got, n, n+1)
	}
	// arrays.py retires idle workers after 0.5 s, all but the first.
	deadline := time.Now().Add(15 * time.Second)
	for {
		time.Sleep(time.Second)
		got := intCall(t, ts, arrThreads)
		if got == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d threads long after the calls ended, want 2", got)
		}
	}
}

// A cancel that lands late (as its call ends, or in a C call that raises
// it only on return) never reaches the next call the thread runs, and that
// call sees only its own state: its id in its log records, no progress it
// did not ask for, not cancelled.
func TestPythonLateCancelNeverHitsTheNextCall(t *testing.T) {
	p := startArraysPool(t)
	type reply struct {
		m   map[string]any
		err error
	}
	replies := make(chan reply, 64)
	go func() {
		for {
			body, blob, err := readFrame(p.r)
			if err != nil {
				replies <- reply{err: err}
				return
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil || blob {
				replies <- reply{err: fmt.Errorf("frame %q (blob %v): %v", body, blob, err)}
				return
			}
			replies <- reply{m: m}
		}
	}()
	rng := rand.New(rand.NewPCG(9, 13))
	kinds := []string{"python", "nexus.sleep", "time.sleep"}
	const rounds = 300
	pending := map[float64]string{} // id → "busy" or "state"
	got, cancelled := 0, 0
	// take handles one frame: a reply, or a state call's log record.
	take := func() {
		t.Helper()
		select {
		case r := <-replies:
			if r.err != nil {
				t.Fatalf("reading replies: %v; pool output:\n%s", r.err, p.output.String())
			}
			id := r.m["id"].(float64)
			if r.m["type"] == "log" { // from a state call, which logs its own id
				if pending[id] != "state" || r.m["data"] != id {
					t.Errorf("log record %v: want one with the id of the state call that sent it", r.m)
				}
				return
			}
			what, ok := pending[id]
			if !ok {
				t.Fatalf("reply for an id not in flight: %v", r.m)
			}
			delete(pending, id)
			got++
			switch {
			case what == "state":
				want := []any{id, false}
				if r.m["type"] != "result" || !reflect.DeepEqual(r.m["value"], want) {
					t.Errorf("call %v after cancelled calls: %v, want the result %v", id, r.m, want)
				}
			case r.m["type"] == "result":
			case r.m["type"] == "error" && r.m["cancelled"] == true && r.m["message"] == "cancelled":
				cancelled++
			default:
				t.Errorf("cancelled call %v: %v, want its result or the cancelled error", id, r.m)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no reply within 20s; %d in flight; pool output:\n%s", len(pending), p.output.String())
		}
	}
	id := 0
	for range rounds {
		for len(pending) >= 8 {
			take()
		}
		id++
		busy := id
		pending[float64(busy)] = "busy"
		p.send(t, fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":[%q,%d]}`, busy, arrBusy, kinds[rng.IntN(len(kinds))], rng.IntN(6)))
		time.Sleep(time.Duration(rng.IntN(6000)) * time.Microsecond)
		p.send(t, fmt.Sprintf(`{"type":"cancel","id":%d}`, busy))
		// Right behind the cancel: the call most likely to reuse its thread.
		id++
		pending[float64(id)] = "state"
		p.send(t, fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":[%d]}`, id, arrState, id))
	}
	for len(pending) > 0 {
		take()
	}
	if got != 2*rounds {
		t.Errorf("%d replies to %d calls", got, 2*rounds)
	}
	t.Logf("%d of %d busy calls were cancelled, the others finished first", cancelled, rounds)
	for _, bad := range []string{"Traceback", "Cancelled", "Exception"} {
		if strings.Contains(p.output.String(), bad) {
			t.Errorf("the pool wrote %q:\n%s", bad, p.output.String())
		}
	}
}
