package mcp

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
	"github.com/nexus-mcp/nexus/internal/memmark"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 100)
	in := "a\r\n\nb\n" + long + "\n" + "c\n" + strings.Repeat("y", 50) + "\nlast"
	lr := NewLineReader(iotest.OneByteReader(strings.NewReader(in)), 64)
	want := []struct {
		line string
		err  error
	}{{"a", nil}, {"", nil}, {"b", nil}, {"", ErrLineTooLong}, {"c", nil}, {strings.Repeat("y", 50), nil}, {"last", nil}, {"", io.EOF}}
	for i, w := range want {
		got, err := lr.Next()
		if !errors.Is(err, w.err) || (err == nil && string(got) != w.line) {
			t.Fatalf("line %d: got %q, %v; want %q, %v", i, got, err, w.line, w.err)
		}
	}
}

// A line far longer than the reader's buffer but under the cap comes back whole.
func TestLineReaderLargeLine(t *testing.T) {
	big := strings.Repeat("z", 5<<20)
	lr := NewLineReader(strings.NewReader(big+"\nnext\n"), 8<<20)
	got, err := lr.Next()
	if err != nil || len(got) != len(big) {
		t.Fatalf("got %d bytes, %v; want %d", len(got), err, len(big))
	}
	got, err = lr.Next()
	if err != nil || string(got) != "next" {
		t.Fatalf("after the big line: %q, %v", got, err)
	}
}

func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n"), 4)
	f.Add([]byte(strings.Repeat("q", 300)+"\nx"), 16)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max <= 0 || max > 1<<16 {
			max = 64
		}
		lr := NewLineReader(strings.NewReader(string(data)), max)
		total := 0
		for i := 0; i <= len(data)+1; i++ {
			line, err := lr.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err == nil && len(line) > max {
				t.Fatalf("line of %d bytes over the cap %d", len(line), max)
			}
			total += len(line)
			if total > len(data) {
				t.Fatalf("returned more bytes than were read")
			}
		}
		t.Fatalf("reader did not reach EOF")
	})
}

// The runner reuses an idle goroutine, starts one when none is idle (so
// calls still run at once), and waits for all.
func TestRunner(t *testing.T) {
	r := newRunner()
	defer r.Close()
	release := make(chan struct{})
	started := make(chan int, 3)
	for i := range 3 {
		r.Go(func() { started <- i; <-release })
	}
	for range 3 {
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("three functions did not run at once")
		}
	}
	close(release)
	r.Wait()
	ran := make(chan struct{})
	r.Go(func() { close(ran) })
	<-ran
	r.Wait()
}

// A tools/call whose arguments are not JSON is a parse error with no id,
// as it was when the whole line was checked before anything ran, though
// stdio now checks the arguments while reading them.
func TestStdioInvalidArgumentsAreAParseError(t *testing.T) {
	srv := newTestServer(t, &fakePool{}, Options{})
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"_1":tru}}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope","arguments":[1,2x]}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"add","arguments":{"_1":41}}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := srv.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d replies, want 4:\n%s", len(lines), out.String())
	}
	want := map[string]bool{
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON: invalid character '}' in literal true (expecting 'e')"}}`: true,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON: invalid character 'x' after array element"}}`:             true,
	}
	parseErrors := 0
	for _, l := range lines[1:] {
		switch {
		case want[l]:
			parseErrors++
		case strings.Contains(l, `"id":9`) && strings.Contains(l, `"text":"42"`):
		default:
			t.Errorf("unexpected reply %s", l)
		}
	}
	if parseErrors != 2 {
		t.Errorf("%d parse errors, want 2:\n%s", parseErrors, out.String())
	}
}

// A large reply goes out in pieces, the same bytes as written whole,
// whatever its text holds where the pieces meet.
func TestStreamedReplyIsTheSameLine(t *testing.T) {
	var text []byte
	for len(text) < 3*streamMin {
		text = append(text, `[1,"é€😀\"\\",`...)
		text = append(text, "\x01\u2028\xff"...)
		text = append(text, `]`...)
	}
	for _, value := range [][]byte{text, bytes.Repeat([]byte("1234567,"), streamMin/4)} {
		r := &Response{ID: json.RawMessage(`7`), Result: &CallToolResult{
			Content: []any{&textBlock{Type: "text", Text: "first"}, valueText(value)}, StructuredContent: json.RawMessage(`{"a":1}`)}}
		if !streamed(r) {
			t.Fatal("a large reply is not streamed")
		}
		whole, err := marshalLine(r)
		if err != nil {
			t.Fatal(err)
		}
		if pieces := streamedLine(t, r); !bytes.Equal(pieces, whole) {
			t.Errorf("streamed reply of %d bytes differs from the whole one of %d", len(pieces), len(whole))
		}
	}
}

// A large value written from the pool's arrays as its reply goes out is
// the line the value's whole text gave, streamed or written whole (a
// batch's reply).
func TestLazyReplyIsTheSameLine(t *testing.T) {
	var ints []byte
	for k := range 400_000 {
		ints = binary.LittleEndian.AppendUint64(ints, uint64(int64(k*7919%1_000_003-500_000)))
	}
	var reals []byte
	for k := range 200 * 1000 {
		f := float64(k) / 7
		switch k % 1001 {
		case 5:
			f = math.NaN()
		case 6:
			f = math.Inf(-1)
		}
		reals = binary.LittleEndian.AppendUint64(reals, math.Float64bits(f))
	}
	tests := []struct {
		name, schema, json string
		arrays             []ndarray.Array
	}{
		{"ints", "aj", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.I8, Shape: []int{400_000}, Data: ints}}},
		{"reals with NaN", "aaf8", `null`, []ndarray.Array{{Path: []any{}, DType: ndarray.F8, Shape: []int{200, 1000}, Data: reals}}},
		{"nested in a record", "m21xaf81ys", `{"y":"é\"\\","x":null}`, []ndarray.Array{{Path: []any{"x"}, DType: ndarray.F8, Shape: []int{200_000}, Data: reals}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ty, err := manifest.ParseType(tt.schema)
			if err != nil {
				t.Fatal(err)
			}
			v := ndarray.Value{JSON: []byte(tt.json), Arrays: tt.arrays}
			text, err := argmap.ResultValue(&manifest.Return{T: ty}, v)
			if err != nil {
				t.Fatal(err)
			}
			lazy, err := argmap.LazyResultValue(&manifest.Return{T: ty}, v)
			if err != nil {
				t.Fatal(err)
			}
			want, err := marshalLine(&Response{ID: json.RawMessage(`7`), Result: &CallToolResult{Content: []any{valueText(text)}}})
			if err != nil {
				t.Fatal(err)
			}
			r := &Response{ID: json.RawMessage(`7`), Result: &CallToolResult{Content: []any{lazyText{lazy}}}}
			if !streamed(r) {
				t.Fatal("a lazy value's reply is not streamed")
			}
			if pieces := streamedLine(t, r); !bytes.Equal(pieces, want) {
				t.Errorf("streamed reply of %d bytes differs from the whole text's %d", len(pieces), len(want))
			}
			whole, err := marshalLine(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(whole, want) {
				t.Errorf("reply written whole, %d bytes, differs from the whole text's %d", len(whole), len(want))
			}
		})
	}
}

// streamedLine is the line a streamed reply goes out as: splitStreamed,
// then writeStreamed, as ServeStdio sends it.
func streamedLine(t *testing.T, r *Response) []byte {
	t.Helper()
	head, body, tail, err := splitStreamed(r)
	if err != nil {
		t.Fatal(err)
	}
	var pieces bytes.Buffer
	if err := writeStreamed(&pieces, head, body, tail); err != nil {
		t.Fatal(err)
	}
	return pieces.Bytes()
}

// A long line's pieces are joined into the line and let go as they are
// copied, so that the line is not in memory twice.
func TestJoinLetsThePiecesGo(t *testing.T) {
	for _, sizes := range [][]int{{1}, {64 << 10, 64 << 10, 5}, {joinRelease, 3, joinRelease + 1, 7}} {
		var pieces [][]byte
		for k, n := range sizes {
			pieces = append(pieces, bytes.Repeat([]byte{byte('a' + k)}, n))
		}
		want := bytes.Join(pieces, nil)
		got := join(pieces)
		if !bytes.Equal(got, want) {
			t.Errorf("pieces of %v: joined %d bytes differ from the %d of bytes.Join", sizes, len(got), len(want))
		}
		for k, p := range pieces {
			if p != nil {
				t.Errorf("pieces of %v: piece %d still held after the join", sizes, k)
			}
		}
	}
}

// A line's pieces are given back to the OS only for a large line longer
// than any before it: a line no longer finds pages of its size to reuse.
func TestNewLargestLine(t *testing.T) {
	m := memmark.Mark{Min: lineMark.Min} // join's threshold, on a mark of the test's own
	for _, tt := range []struct {
		n    int
		want bool
	}{{largeValue - 1, false}, {largeValue, true}, {largeValue, false}, {100 << 20, true}, {10 << 20, false}, {100<<20 + 1, true}} {
		if got := m.Raise(tt.n); got != tt.want {
			t.Errorf("Raise(%d): %v, want %v", tt.n, got, tt.want)
		}
	}
}
