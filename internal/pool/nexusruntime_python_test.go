package pool

import (
	"reflect"
	"testing"
	"time"
)

// startRawPool runs testdata/pools/pool.py with the Python runtime.
func startRawPool(t *testing.T) *rawPool {
	t.Helper()
	needPython(t)
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
