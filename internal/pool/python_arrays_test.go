package pool

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// The mids of testdata/pools/arrays.py.
const (
	arrDescribe = iota + 1
	arrEcho
	arrMake
	arrThreads
	arrSleepMS
	arrGather
	arrBusy
	arrState
)

// startArraysPool runs testdata/pools/arrays.py on bare pipes, past its
// ready message.
func startArraysPool(t *testing.T) *rawPool {
	t.Helper()
	needPython(t)
	p := startRawProcess(t, &rawPool{recvWait: 20 * time.Second, exitWait: 10 * time.Second},
		"py", testdataDir(t), []string{"python3", "arrays.py"}, nil)
	if m := p.recv(t); m["type"] != "ready" {
		t.Fatalf("first message %v, want ready", m)
	}
	return p
}

func i8Blob(vs ...int64) []byte {
	b := make([]byte, 8*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	return b
}

func i4Blob(vs ...int32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

func f8Blob(vs ...float64) []byte {
	b := make([]byte, 8*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return b
}

// callValue sends one call and returns its reply, which must carry no blobs.
func (p *rawPool) callValue(t *testing.T, frame string) map[string]any {
	t.Helper()
	p.send(t, frame)
	return p.recv(t)
}

// An array argument reaches the function as exactly the value its JSON
// form gives: the same lists, ints and floats, wherever it sits.
func TestPythonArrayArguments(t *testing.T) {
	p := startArraysPool(t)
	tests := []struct {
		name   string
		blobs  [][]byte
		arrays string // the call's arrays member
		args   string // with null placeholders
		json   string // the same arguments as JSON
		want   string // the function's repr of its arguments
	}{
		{"top-level i8", [][]byte{i8Blob(1, -2, 3)}, `[{"path":[0],"dtype":"i8","shape":[3]}]`,
			`[null]`, `[[1,-2,3]]`, `([1, -2, 3],)`},
		{"i8 extremes", [][]byte{i8Blob(math.MinInt64, math.MaxInt64, 0)}, `[{"path":[0],"dtype":"i8","shape":[3]}]`,
			`[null]`, `[[-9223372036854775808,9223372036854775807,0]]`, `([-9223372036854775808, 9223372036854775807, 0],)`},
		{"inside a record", [][]byte{i8Blob(4, 5)}, `[{"path":[0,"xs"],"dtype":"i8","shape":[2]}]`,
			`[{"name":"a","xs":null,"n":1}]`, `[{"name":"a","xs":[4,5],"n":1}]`, `({'name': 'a', 'xs': [4, 5], 'n': 1},)`},
		{"inside a list", [][]byte{f8Blob(2.5, math.Copysign(0, -1), 1e300, 2)}, `[{"path":[1,1],"dtype":"f8","shape":[4]}]`,
			`[7,[[1.5],null]]`, `[7,[[1.5],[2.5,-0.0,1e300,2.0]]]`, `(7, [[1.5], [2.5, -0.0, 1e+300, 2.0]])`},
		{"rank 2 i4", [][]byte{i4Blob(1, 2, 3, 4, 5, math.MinInt32)}, `[{"path":[0],"dtype":"i4","shape":[2,3]}]`,
			`[null]`, `[[[1,2,3],[4,5,-2147483648]]]`, `([[1, 2, 3], [4, 5, -2147483648]],)`},
		{"rank 3 f8", [][]byte{f8Blob(0, 1, 2, 3, 4, 5, 6, 7)}, `[{"path":[0],"dtype":"f8","shape":[2,2,2]}]`,
			`[null]`, `[[[[0.0,1.0],[2.0,3.0]],[[4.0,5.0],[6.0,7.0]]]]`, `([[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]],)`},
		{"empty", [][]byte{{}}, `[{"path":[0],"dtype":"i8","shape":[0]}]`, `[null]`, `[[]]`, `([],)`},
		{"empty rows", [][]byte{{}}, `[{"path":[0],"dtype":"f8","shape":[2,0]}]`, `[null]`, `[[[],[]]]`, `([[], []],)`},
		{"no rows", [][]byte{{}}, `[{"path":[0],"dtype":"f8","shape":[0,3]}]`, `[null]`, `[[]]`, `([],)`},
		{"two arrays", [][]byte{i8Blob(1), f8Blob(0.5, 0.25)},
			`[{"path":[0],"dtype":"i8","shape":[1]},{"path":[1,"m",0],"dtype":"f8","shape":[1,2]}]`,
			`[null,{"m":[null,3]}]`, `[[1],{"m":[[[0.5,0.25]],3]}]`, `([1], {'m': [[[0.5, 0.25]], 3]})`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, b := range tt.blobs {
				p.sendBlob(t, b)
			}
			withArrays := p.callValue(t, fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":%s,"arrays":%s}`, 2*i+1, arrDescribe, tt.args, tt.arrays))
			asJSON := p.callValue(t, fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":%s}`, 2*i+2, arrDescribe, tt.json))
			if withArrays["value"] != asJSON["value"] {
				t.Errorf("with arrays the function saw %v; with JSON %v", withArrays["value"], asJSON["value"])
			}
			if withArrays["value"] != tt.want {
				t.Errorf("the function saw %v, want %s", withArrays["value"], tt.want)
			}
		})
	}
}

// A result that is a rectangular nest of numbers, for a call with ret,
// comes back as one blob and a result describing it.
func TestPythonArrayResults(t *testing.T) {
	p := startArraysPool(t)
	ints := func(n int, f func(i int) int64) []byte {
		vs := make([]int64, n)
		for i := range vs {
			vs[i] = f(i)
		}
		return i8Blob(vs...)
	}
	reals := func(n int, f func(i int) float64) []byte {
		vs := make([]float64, n)
		for i := range vs {
			vs[i] = f(i)
		}
		return f8Blob(vs...)
	}
	tests := []struct {
		kind  string
		n     int
		ret   string
		dtype string
		shape []any
		data  []byte
	}{
		{"ints", 300, `{"rank":1,"number":"int"}`, "i8", []any{300.0}, ints(300, func(i int) int64 { return int64(i*7 - 1000) })},
		{"int64 edges", 256, `{"rank":1,"number":"int"}`, "i8", []any{256.0}, ints(256, func(i int) int64 {
			switch i {
			case 0:
				return math.MinInt64
			case 1:
				return math.MaxInt64
			}
			return int64(i - 2)
		})},
		{"reals", 300, `{"rank":1,"number":"real"}`, "f8", []any{300.0}, reals(300, func(i int) float64 { return float64(i)/8 - 3 })},
		{"ints as reals", 300, `{"rank":1,"number":"real"}`, "f8", []any{300.0}, reals(300, func(i int) float64 { return float64(i) })},
		{"matrix", 100, `{"rank":2,"number":"real"}`, "f8", []any{3.0, 100.0}, reals(300, func(i int) float64 { return float64(i/100)*10.5 + float64(i%100) })},
		{"int cube", 50, `{"rank":3,"number":"int"}`, "i8", []any{3.0, 2.0, 50.0}, ints(300, func(i int) int64 { return int64(i/100*100 + i%100/50*10 + i%50) })},
		{"tuple rows", 200, `{"rank":2,"number":"int"}`, "i8", []any{2.0, 200.0}, ints(400, func(i int) int64 { return int64(i % 200) })},
	}
	for i, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			p.send(t, fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":[%q,%d],"ret":%s}`, i+1, arrMake, tt.kind, tt.n, tt.ret))
			m, blobs := p.recvWithBlobs(t)
			want := map[string]any{"type": "result", "id": float64(i + 1), "value": nil,
				"arrays": []any{map[string]any{"path": []any{}, "dtype": tt.dtype, "shape": tt.shape}}}
			if !reflect.DeepEqual(m, want) {
				t.Fatalf("result %v, want %v", m, want)
			}
			if len(blobs) != 1 || string(blobs[0]) != string(tt.data) {
				t.Errorf("%d blobs, the first of %d bytes; want one of %d bytes, the numbers in order", len(blobs), len(firstBlob(blobs)), len(tt.data))
			}
		})
	}
}

func firstBlob(blobs [][]byte) []byte {
	if len(blobs) == 0 {
		return nil
	}
	return blobs[0]
}

// What cannot go as an array goes as JSON, exactly as without ret: the
// ret hint never changes what the client gets.
func TestPythonArrayResultFallsBackToJSON(t *testing.T) {
	p := startArraysPool(t)
	p.useNumber = true
	tests := []struct {
		kind, ret string
		n         int
	}{
		{"ragged", `{"rank":2,"number":"int"}`, 300},
		{"huge", `{"rank":1,"number":"int"}`, 300},
		{"huge", `{"rank":1,"number":"int"}`, 300_000}, // beyond 64 bits in the last of several pieces
		{"floats", `{"rank":1,"number":"int"}`, 300},
		{"bool", `{"rank":1,"number":"int"}`, 300},
		{"bool", `{"rank":1,"number":"real"}`, 300},
		{"short", `{"rank":1,"number":"int"}`, 3},
		{"not a list", `{"rank":1,"number":"int"}`, 300},
		{"ints", `{"rank":2,"number":"int"}`, 300},    // numbers where rows should be
		{"matrix", `{"rank":1,"number":"real"}`, 100}, // rows where numbers should be
		{"ints", `{"rank":0,"number":"int"}`, 300},
		{"ints", `{"rank":1,"number":"complex"}`, 300},
		{"nan", `{"rank":1,"number":"real"}`, 300},
		{"inf", `{"rank":1,"number":"real"}`, 300},
	}
	for i, tt := range tests {
		t.Run(tt.kind+" "+tt.ret, func(t *testing.T) {
			id := 2 * (i + 1)
			p.send(t, fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":[%q,%d],"ret":%s}`, id, arrMake, tt.kind, tt.n, tt.ret))
			hinted := p.recv(t)
			p.send(t, fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":[%q,%d]}`, id+1, arrMake, tt.kind, tt.n))
			plain := p.recv(t)
			delete(hinted, "id")
			delete(plain, "id")
			if plain["type"] == "error" { // the traceback names a line of the runtime
				delete(hinted, "traceback")
				delete(plain, "traceback")
			}
			if !reflect.DeepEqual(hinted, plain) {
				t.Errorf("with ret: %v\nwithout: %v", hinted, plain)
			}
		})
	}
	// NaN and infinity go as the wire's strings, ret or not
	// (docs/pool-protocol.md, "NaN and infinity").
	p.send(t, fmt.Sprintf(`{"type":"call","id":1,"mid":%d,"args":["nan",300],"ret":{"rank":1,"number":"real"}}`, arrMake))
	got := p.recv(t)
	if values, _ := got["value"].([]any); got["type"] != "result" || len(values) != 301 || values[300] != "NaN" {
		t.Errorf("a NaN result with ret: %v, want the list with \"NaN\" last", got)
	}
}

// Blobs that the next message does not describe break the protocol: the
// pool says what it saw and exits with status 2.
func TestPythonArrayProtocolErrors(t *testing.T) {
	testExits(t, startArraysPool, "nexus pool: protocol error: ", []exitCase{
		{"blob before a call without arrays", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, i8Blob(1))
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[null]}`)
		}, 2, "call message describes 0 arrays but 1 blobs came before it"},
		{"array without its blob", func(p *rawPool, t *testing.T) {
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[null],"arrays":[{"path":[0],"dtype":"i8","shape":[1]}]}`)
		}, 2, "call message describes 1 arrays but 0 blobs came before it"},
		{"blob before a cancel", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, i8Blob(1))
			p.send(t, `{"type":"cancel","id":1}`)
		}, 2, "cancel message describes 0 arrays but 1 blobs came before it"},
		{"blob of the wrong size", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, i8Blob(1, 2))
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[null],"arrays":[{"path":[0],"dtype":"i8","shape":[3]}]}`)
		}, 2, "call message: arrays[0] of shape [3] and dtype i8 needs 24 bytes, but its blob has 16"},
		{"unknown dtype", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, []byte{1})
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[null],"arrays":[{"path":[0],"dtype":"u1","shape":[1]}]}`)
		}, 2, `call message: arrays[0] has dtype "u1" (want i4, i8 or f8)`},
		{"no shape", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, i8Blob(1))
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[null],"arrays":[{"path":[0],"dtype":"i8"}]}`)
		}, 2, "call message: arrays[0] has shape null"},
		{"path to a value", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, i8Blob(1))
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[5],"arrays":[{"path":[0],"dtype":"i8","shape":[1]}]}`)
		}, 2, "call 1: array path [0] holds a value, not the null placeholder"},
		{"path to nothing", func(p *rawPool, t *testing.T) {
			p.sendBlob(t, i8Blob(1))
			p.send(t, `{"type":"call","id":1,"mid":2,"args":[{"a":null}],"arrays":[{"path":[0,"b"],"dtype":"i8","shape":[1]}]}`)
		}, 2, `call 1: array path [0,"b"]: nothing at step 1`},
		{"blob too long", func(p *rawPool, t *testing.T) { p.in.Write([]byte{0xC0, 0, 0, 1}) }, 2, "blob length 1073741825 is over 1073741824"},
	})
}

// Through a Set, arrays travel both ways, and the result's numbers read as
// JSON are the JSON answer of the same call without arrays.
func TestPythonArraysThroughSet(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "arrays.py"}}, Options{})
	ctx := context.Background()

	const n = 1000
	vs := make([]int64, n)
	var text strings.Builder
	text.WriteByte('[')
	for i := range vs {
		vs[i] = int64(i*i) - 123456789012
		if i > 0 {
			text.WriteByte(',')
		}
		fmt.Fprint(&text, vs[i])
	}
	text.WriteByte(']')
	arr := ndarray.Array{Path: []any{0}, DType: ndarray.I8, Shape: []int{n}, Data: i8Blob(vs...)}
	got, err := ts.CallWith(ctx, 0, arrEcho, rawArgs(t, nil), CallOptions{Arrays: []ndarray.Array{arr}, Ret: &ndarray.Ret{Rank: 1, Number: ndarray.Int}})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.JSON) != "null" || len(got.Arrays) != 1 || got.Arrays[0].DType != ndarray.I8 ||
		!reflect.DeepEqual(got.Arrays[0].Shape, []int{n}) || string(got.Arrays[0].Data) != string(arr.Data) {
		t.Fatalf("echo of an i8 array gave %s and %d arrays, want null and the array back", got.JSON, len(got.Arrays))
	}
	// An array over the frame limit fails its call, and the pool serves
	// on; the writer once refused it and the call waited for ever.
	// (A GiB of untouched zeroes from the OS is address space, not memory.)
	huge := ndarray.Array{Path: []any{0}, DType: ndarray.I8, Shape: []int{MaxFrameSize/8 + 1}, Data: make([]byte, MaxFrameSize+8)}
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err = ts.CallWith(tctx, 0, arrEcho, rawArgs(t, nil), CallOptions{Arrays: []ndarray.Array{huge}})
	cancel()
	huge = ndarray.Array{}
	if err == nil || !strings.Contains(err.Error(), "over the 1024 MiB frame limit") {
		t.Errorf("an array of %d bytes: %v, want the frame limit's error", MaxFrameSize+8, err)
	}
	plain, err := ts.CallWith(ctx, 0, arrEcho, rawArgs(t, json.RawMessage(text.String())), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asJSON, err := ndarray.AppendJSON(nil, &got.Arrays[0], ndarray.Int)
	if err != nil {
		t.Fatal(err)
	}
	if string(asJSON) != string(plain.JSON) || len(plain.Arrays) != 0 {
		t.Errorf("the array as JSON differs from the JSON answer:\n%.200s\n%.200s", asJSON, plain.JSON)
	}

	// A float matrix; Python writes 2.0 where nexus writes 2, so compare numbers.
	rows, cols := 40, 30
	fs := make([]float64, rows*cols)
	for i := range fs {
		fs[i] = float64(i)/3 - 100
	}
	mat := ndarray.Array{Path: []any{0}, DType: ndarray.F8, Shape: []int{rows, cols}, Data: f8Blob(fs...)}
	got, err = ts.CallWith(ctx, 0, arrEcho, rawArgs(t, nil), CallOptions{Arrays: []ndarray.Array{mat}, Ret: &ndarray.Ret{Rank: 2, Number: ndarray.Real}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Arrays) != 1 || got.Arrays[0].DType != ndarray.F8 || !reflect.DeepEqual(got.Arrays[0].Shape, []int{rows, cols}) {
		t.Fatalf("echo of an f8 matrix gave %s and %v, want one %dx%d f8 array", got.JSON, got.Arrays, rows, cols)
	}
	matJSON, err := ndarray.AppendJSON(nil, &got.Arrays[0], ndarray.Real)
	if err != nil {
		t.Fatal(err)
	}
	matText, err := ndarray.AppendPoolJSON(nil, &mat)
	if err != nil {
		t.Fatal(err)
	}
	plain, err = ts.CallWith(ctx, 0, arrEcho, rawArgs(t, json.RawMessage(matText)), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var a, b [][]float64
	if err := json.Unmarshal(matJSON, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(plain.JSON, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) || len(a) != rows {
		t.Errorf("the matrix as JSON differs from the JSON answer:\n%.200s\n%.200s", matJSON, plain.JSON)
	}

	// Without Ret the same result is JSON.
	got, err = ts.CallWith(ctx, 0, arrEcho, rawArgs(t, nil), CallOptions{Arrays: []ndarray.Array{arr}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Arrays) != 0 || string(got.JSON) != string(jsonEcho(t, ts, text.String())) {
		t.Errorf("echo without ret gave %d arrays and %.100s, want the JSON list", len(got.Arrays), got.JSON)
	}
}

func jsonEcho(t *testing.T, ts *testSet, text string) json.RawMessage {
	t.Helper()
	v, err := ts.CallWith(context.Background(), 0, arrEcho, rawArgs(t, json.RawMessage(text)), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return v.JSON
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

// A caller's arrays are dropped once sent only when it hands them over
// (GiveArrays): a large argument is then not in memory beside its result,
// and arrays a caller keeps are never written to.
func TestPythonGivenArraysGoOnceSent(t *testing.T) {
	ts := startTestSet(t, Spec{Exec: []string{"python3", "arrays.py"}}, Options{})
	ctx := context.Background()
	data := i8Blob(1, -2, 3, 1<<40)
	for _, give := range []bool{false, true} {
		t.Run(fmt.Sprint("give=", give), func(t *testing.T) {
			given := []ndarray.Array{{Path: []any{0}, DType: ndarray.I8, Shape: []int{4}, Data: slices.Clone(data)}}
			got, err := ts.CallWith(ctx, 0, arrEcho, rawArgs(t, nil), CallOptions{Arrays: given, GiveArrays: give, Ret: &ndarray.Ret{Rank: 1, Number: ndarray.Int}})
			if err != nil {
				t.Fatal(err)
			}
			back := len(got.Arrays) == 1 && string(got.Arrays[0].Data) == string(data) ||
				len(got.Arrays) == 0 && string(got.JSON) == "[1,-2,3,1099511627776]" // small: as JSON
			if !back {
				t.Fatalf("echo gave %s and %d arrays, want the array back", got.JSON, len(got.Arrays))
			}
			if dropped := given[0].Data == nil; dropped != give {
				t.Errorf("the caller's array dropped: %v, want %v", dropped, give)
			}
		})
	}
}

// A sent call's arrays are kept while it could still go to a fresh
// process: in a sequential pool, behind a call that may get stuck.
func TestMayResend(t *testing.T) {
	tests := []struct {
		name      string
		mode      concurrency
		inflight  []uint64
		abandoned []uint64
		want      bool
	}{
		{"sequential, alone", sequential, []uint64{5}, nil, false},
		{"sequential, behind a call", sequential, []uint64{4, 5}, nil, true},
		{"sequential, behind an abandoned call", sequential, []uint64{5}, []uint64{3}, true},
		{"sequential, ahead of the others", sequential, []uint64{5, 6}, []uint64{7}, false},
		{"concurrent, behind a call", concurrent, []uint64{4, 5}, []uint64{3}, false},
		{"unknown, behind a call", concurrencyUnknown, []uint64{4, 5}, nil, false},
	}
	for _, tt := range tests {
		p := &process{mode: tt.mode, inflight: map[uint64]*pendingCall{}, abandoned: map[uint64]abandonedCall{}}
		for _, id := range tt.inflight {
			p.inflight[id] = &pendingCall{}
		}
		for _, id := range tt.abandoned {
			p.abandoned[id] = abandonedCall{}
		}
		if got := p.mayResend(5); got != tt.want {
			t.Errorf("%s: mayResend %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Large arrays and messages, past the runtime's 16 MiB read chunk and
// sent back in pieces, come through byte for byte.
func TestPythonLargeArrays(t *testing.T) {
	p := startArraysPool(t)
	p.recvWait = time.Minute
	n := 2_500_000 // 20 MB of i8: over the 16 MiB chunk
	ints := make([]int64, n)
	for i := range ints {
		ints[i] = int64(i)*7919 - 1<<40
	}
	ints[1] = math.MinInt64
	ints[n-1] = math.MaxInt64
	reals := make([]float64, n)
	for i := range reals {
		reals[i] = float64(i)*0.37 - 1e6
	}
	tests := []struct {
		name, dtype, shape, ret string
		blob                    []byte
	}{
		{"i8, rank 1, 20 MB", "i8", fmt.Sprint("[", n, "]"), `{"rank":1,"number":"int"}`, i8Blob(ints...)},
		{"f8, rank 2, 20 MB", "f8", "[1000,2500]", `{"rank":2,"number":"real"}`, f8Blob(reals...)},
		{"i8, rank 1, under a chunk", "i8", "[1000]", `{"rank":1,"number":"int"}`, i8Blob(ints[:1000]...)},
		{"f8, rank 2, rows shorter than a piece", "f8", "[100000,3]", `{"rank":2,"number":"real"}`, f8Blob(reals[:300000]...)},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.sendBlob(t, tt.blob)
			p.send(t, fmt.Sprintf(`{"type":"call","id":%d,"mid":%d,"args":[null],"arrays":[{"path":[0],"dtype":%q,"shape":%s}],"ret":%s}`,
				i+1, arrEcho, tt.dtype, tt.shape, tt.ret))
			m, blobs := p.recvWithBlobs(t)
			if m["type"] != "result" || len(blobs) != 1 {
				t.Fatalf("reply %v with %d blobs, want a result with one", m, len(blobs))
			}
			if !bytes.Equal(blobs[0], tt.blob) {
				t.Errorf("the echo differs: %d bytes back for %d", len(blobs[0]), len(tt.blob))
			}
		})
	}
	// A message over the chunk: 17 MB of JSON text in one string.
	long := strings.Repeat("x", 17<<20)
	m := p.callValue(t, fmt.Sprintf(`{"type":"call","id":99,"mid":%d,"args":[%q]}`, arrEcho, long))
	if m["value"] != long {
		t.Errorf("a 17 MiB string came back as %d bytes", len(fmt.Sprint(m["value"])))
	}
}
