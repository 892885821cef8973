package pool

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"
)

// rawPool runs a pool on bare pipes, so that tests can speak the protocol
// to a language runtime frame by frame.
type rawPool struct {
	cmd    *exec.Cmd
	in     *os.File // nexus → pool (its fd 3)
	out    *os.File // pool → nexus (its fd 4)
	r      *bufio.Reader
	output syncBuffer // the pool's stdout and stderr

	recvWait  time.Duration // how long recv waits for a frame
	exitWait  time.Duration // how long exitCode waits for the exit
	useNumber bool          // recv keeps numbers as their JSON text
}

// startRawProcess starts argv in dir as a pool of lang, with fds 3 and 4
// and the environment nexus gives pools; setup may change the command.
func startRawProcess(t *testing.T, p *rawPool, lang, dir string, argv []string, setup func(*exec.Cmd)) *rawPool {
	t.Helper()
	rt, err := RuntimeDir()
	if err != nil {
		t.Fatal(err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.in, p.out, p.r = inW, outR, bufio.NewReader(outR)
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Dir = dir
	p.cmd.Env = poolEnv(lang, 1, rt)
	p.cmd.ExtraFiles = []*os.File{inR, outW}
	p.cmd.Stdout = &p.output
	p.cmd.Stderr = &p.output
	if setup != nil {
		setup(p.cmd)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	t.Cleanup(func() {
		p.in.Close()
		p.out.Close()
		p.cmd.Process.Kill()
		p.cmd.Wait()
		if t.Failed() {
			t.Logf("pool output:\n%s", p.output.String())
		}
	})
	return p
}

// startRawPool runs testdata/pools/pool.py with the Python runtime.
func startRawPool(t *testing.T) *rawPool {
	t.Helper()
	needPython(t)
	return startRawProcess(t, &rawPool{recvWait: 20 * time.Second, exitWait: 10 * time.Second},
		"py", testdataDir(t), []string{"python3", "pool.py"}, nil)
}

func (p *rawPool) send(t *testing.T, frame string) {
	t.Helper()
	if err := writeFrame(p.in, []byte(frame)); err != nil {
		t.Fatal(err)
	}
}

// sendBlob sends one blob frame (protocol 2): the data of an array that
// the next message describes.
func (p *rawPool) sendBlob(t *testing.T, data []byte) {
	t.Helper()
	if err := writeBlob(p.in, data); err != nil {
		t.Fatal(err)
	}
}

// recv returns the next message, decoded; it fails the test if blobs come
// before it (recvWithBlobs takes those).
func (p *rawPool) recv(t *testing.T) map[string]any {
	t.Helper()
	m, blobs := p.recvWithBlobs(t)
	if len(blobs) > 0 {
		t.Fatalf("%d blobs came before the message %v", len(blobs), m)
	}
	return m
}

// recvWithBlobs returns the next message, decoded, and the blobs that came
// before it.
func (p *rawPool) recvWithBlobs(t *testing.T) (map[string]any, [][]byte) {
	t.Helper()
	p.out.SetReadDeadline(time.Now().Add(p.recvWait))
	var blobs [][]byte
	var payload []byte
	for {
		body, blob, err := readFrame(p.r)
		if err != nil {
			t.Fatalf("reading a frame from the pool: %v; its output:\n%s", err, p.output.String())
		}
		if !blob {
			payload = body
			break
		}
		blobs = append(blobs, body)
	}
	d := json.NewDecoder(bytes.NewReader(payload))
	if p.useNumber {
		d.UseNumber()
	}
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("frame %q: %v", payload, err)
	}
	return m, blobs
}

// exitCode waits for the pool to exit by itself.
func (p *rawPool) exitCode(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return exitErr.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(p.exitWait):
		t.Fatal("the pool did not exit")
		return -1
	}
}

func TestPythonReady(t *testing.T) {
	p := startRawPool(t)
	got := p.recv(t)
	var mids []any
	for m := 1; m <= testPoolMids; m++ {
		mids = append(mids, float64(m))
	}
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

func TestPythonExit(t *testing.T) {
	tests := []struct {
		name       string
		send       func(p *rawPool, t *testing.T)
		wantStatus int
		wantOutput string
	}{
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startRawPool(t)
			p.recv(t) // ready
			tt.send(p, t)
			if got := p.exitCode(t); got != tt.wantStatus {
				t.Errorf("exit status %d, want %d; output:\n%s", got, tt.wantStatus, p.output.String())
			}
			if !strings.Contains(p.output.String(), tt.wantOutput) {
				t.Errorf("output %q lacks %q", p.output.String(), tt.wantOutput)
			}
		})
	}
}
