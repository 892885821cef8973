package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// Regression: a line far over the cap costs about the cap in allocations,
// not a buffer grown and regrown up to it (whose outgrown copies stayed in
// the process's memory: 244 MB resident for a 100 MiB line at a 64 MiB cap).
func TestLineReaderOversizedLineMemory(t *testing.T) {
	const limit = 1 << 20
	line := bytes.Repeat([]byte("x"), 10*limit)
	in := append(append(line, '\n'), "next\n"...)
	lr := NewLineReader(bytes.NewReader(in), limit)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := lr.Next()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("Next: %v, want ErrLineTooLong", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 2*limit {
		t.Errorf("dropping a line of 10x the cap allocated %d bytes, want at most 2x the cap (%d)", got, 2*limit)
	}
	if got, err := lr.Next(); err != nil || string(got) != "next" {
		t.Errorf("after the long line: %q, %v", got, err)
	}
}

// The cap counts the line's bytes before its "\n", and holds for a last
// line that has none.
func TestLineReaderCapAtEnd(t *testing.T) {
	tests := []struct {
		in   string
		want []string // "!" for ErrLineTooLong
	}{
		{"abcd\n", []string{"abcd"}},
		{"abcde\n", []string{"!"}},
		{"abcd", []string{"abcd"}},
		{"abcde", []string{"!"}},
		{"abc\r\n", []string{"abc"}},
		{"abcd\r\n", []string{"!"}},
		{"ab\nabcdefgh\ncd", []string{"ab", "!", "cd"}},
	}
	for _, tt := range tests {
		lr := NewLineReader(strings.NewReader(tt.in), 4)
		var got []string
		for {
			line, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, ErrLineTooLong) {
				got = append(got, "!")
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(line))
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%q: lines %q, want %q", tt.in, got, tt.want)
		}
	}
}

// fuzzCaller stands in for the pools: it answers every command at once,
// reports progress when asked, and fails one command.
type fuzzCaller struct{}

func (f fuzzCaller) Call(ctx context.Context, c argmap.Call, h CallHooks) (ndarray.Value, error) {
	args, err := c.JSONArgs()
	if err != nil {
		return ndarray.Value{}, err
	}
	v, err := f.call(ctx, c.Command, args, h)
	return ndarray.Value{JSON: v}, err
}

func (fuzzCaller) call(ctx context.Context, cmd *manifest.Command, args []json.RawMessage, h CallHooks) (json.RawMessage, error) {
	if h.Progress != nil {
		total := 2.0
		h.Progress(1, &total, "half")
	}
	if cmd.Name == "fail" {
		return nil, errors.New("ValueError: boom")
	}
	if len(args) > 0 {
		return args[0], nil // right for the echo-like commands, wrong (and caught) for others
	}
	return json.RawMessage(`"no arguments needed"`), nil
}

// knownCodes are the error codes nexus may answer with.
var knownCodes = map[int]bool{CodeParseError: true, CodeInvalidRequest: true, CodeMethodNotFound: true,
	CodeInvalidParams: true, CodeInternalError: true, CodeUnsupportedProtocolVersion: true}

func fuzzServer(t testing.TB) *Server {
	m, err := manifest.Load("../../testdata/shapes")
	if err != nil {
		t.Fatal(err)
	}
	tools, _ := argmap.Tools(m)
	return NewServer(Implementation{Name: "shapes", Version: "1"}, tools, fuzzCaller{}, Options{})
}

// checkReply checks that a reply is one well-formed JSON-RPC response.
func checkReply(t *testing.T, r *Response, wantID json.RawMessage) {
	t.Helper()
	if r == nil {
		t.Fatalf("no reply for id %s", wantID)
	}
	if wantID != nil && string(r.ID) != string(wantID) {
		t.Fatalf("reply id %s, want %s", r.ID, wantID)
	}
	if (r.Error == nil) == (r.Result == nil) && r.Error != nil {
		t.Fatalf("reply with both a result and an error: %+v", r)
	}
	if r.Error != nil && !knownCodes[r.Error.Code] {
		t.Fatalf("unknown error code %d: %s", r.Error.Code, r.Error.Message)
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("reply cannot be encoded: %v", err)
	}
	if !json.Valid(out) {
		t.Fatalf("reply is not JSON: %s", out)
	}
}

// FuzzDispatch: whatever a client sends on one line, decoding and
// dispatching never panic; every request with an id gets exactly one
// well-formed reply with that id, and a notification none.
func FuzzDispatch(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"cursor":"abc"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"addInt","arguments":{"_1":1}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail","arguments":{"_1":"x"},"_meta":{"progressToken":7}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"configureWhole","arguments":{"sysconfig":{"numThreads":2}}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"renderLines","arguments":{"_1":"a\nb","_render":"count"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},7]`,
		`{"jsonrpc":"2.0","id":8,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01"}}}`,
		`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":5}}`,
		`{"jsonrpc":"2.0","id":11,"method":"logging/setLevel","params":{"level":"debug"}}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`, `[]`, `{"jsonrpc":"2.0","id":1,"result":{}}`, `"x"`, `{`, "\x00",
	}
	for _, s := range seeds {
		f.Add([]byte(s), true)
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"addInt","arguments":{"_1":1}}}`), false)
	srv := fuzzServer(f)
	f.Fuzz(func(t *testing.T, line []byte, initialized bool) {
		ctx := context.Background()
		ss := srv.NewSession(func(*Notification) {})
		defer ss.Close()
		if initialized {
			ss.Handle(ctx, &Request{ID: json.RawMessage(`0`), Method: "initialize",
				Params: json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"0"}}`)}, nil)
		}
		items, batch := ParseMessages(line)
		if !batch && len(items) != 1 {
			t.Fatalf("a single message gave %d items", len(items))
		}
		want := 0 // replies a batch must get
		for _, it := range items {
			switch {
			case it.Reply != nil && it.Request != nil:
				t.Fatalf("an item is both a request and a reply: %+v", it)
			case it.Reply != nil:
				checkReply(t, it.Reply, nil)
				if it.Reply.Error == nil {
					t.Fatalf("a decoding reply without an error: %+v", it.Reply)
				}
				want++
			case it.Request != nil && !batch:
				r := ss.Handle(ctx, it.Request, nil)
				if it.Request.IsNotification() {
					if r != nil {
						t.Fatalf("a notification got a reply: %+v", r)
					}
					continue
				}
				checkReply(t, r, it.Request.ID)
			case it.Request != nil && !it.Request.IsNotification():
				want++
			}
		}
		if batch {
			replies := ss.HandleBatch(ctx, items, nil)
			if len(replies) != want {
				t.Fatalf("a batch of %d items (%d wanting replies) got %d replies", len(items), want, len(replies))
			}
			for _, r := range replies {
				checkReply(t, r, nil)
			}
		}
	})
}
