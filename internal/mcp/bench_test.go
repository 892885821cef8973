package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// echoCaller answers at once with the call's first argument: what nexus
// costs around a pool, without a pool.
type echoCaller struct{}

func (echoCaller) Call(_ context.Context, c argmap.Call, _ CallHooks) (ndarray.Value, error) {
	var arrays []ndarray.Array
	for _, a := range c.Arrays {
		if a.Path[0] == 0 { // in the first argument: in the result, one level up
			a.Path = a.Path[1:]
			arrays = append(arrays, a)
		}
	}
	return ndarray.Value{JSON: c.Args[0], Arrays: arrays}, nil
}

// BenchmarkStdioSmallCall measures one tools/call of a small tool through
// ServeStdio, request line in, reply line out, the pool answering at once.
func BenchmarkStdioSmallCall(b *testing.B) {
	srv := newTestServer(b, echoCaller{}, Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go srv.ServeStdio(context.Background(), inR, outW) //nolint:errcheck // ends with the pipe
	out := bufio.NewReader(outR)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"0"}}}`)
	out.ReadBytes('\n')
	lines := make([][]byte, 64)
	for i := range lines {
		lines[i] = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"_1":%d}}}`+"\n", i+1, i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		inW.Write(lines[i%len(lines)])
		reply, err := out.ReadBytes('\n')
		if err != nil || !strings.Contains(string(reply), `"isError":false`) {
			b.Fatalf("reply %s: %v", reply, err)
		}
	}
	b.StopTimer()
	inW.Close()
}

// echoManifest is [Int] -> [Int]: results are checked against their type.
var echoManifest = fixtureManifest("t", remote{"echo", "Echo a list", []string{arg("aj", "[Int]", "xs")}, returns("aj", "[Int]"), ""})

// largeEchoCall is a tools/call of echo with a list of 100 000 integers;
// end closes its params and the request.
func largeEchoCall(end string) string {
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"_1":[`)
	for i := 0; i < 100000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprint(&sb, i*7919)
	}
	return sb.String() + "]}" + end
}

// BenchmarkStdioLargeCall measures a tools/call carrying a list of 100 000
// integers through ServeStdio, the pool echoing it at once.
func BenchmarkStdioLargeCall(b *testing.B) {
	srv := newFixtureServer(b, echoManifest, echoCaller{}, Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go srv.ServeStdio(context.Background(), inR, outW) //nolint:errcheck // ends with the pipe
	out := bufio.NewReaderSize(outR, 1<<20)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"0"}}}`)
	out.ReadBytes('\n')
	line := []byte(largeEchoCall("}}\n"))
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		inW.Write(line)
		reply, err := out.ReadBytes('\n')
		if err != nil || !strings.Contains(string(reply[len(reply)-40:]), `"isError":false`) {
			b.Fatalf("reply %.200s: %v", reply, err)
		}
	}
	b.StopTimer()
	inW.Close()
}

// benchMeta is the _meta of a 2026-07-28 request from a client that
// can answer every question.
const benchMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{}}}`

// BenchmarkStatelessLargeCall is BenchmarkStdioLargeCall at 2026-07-28:
// each call runs in an MRTR round that may yet ask, and whose state would
// be bound to the arguments.
func BenchmarkStatelessLargeCall(b *testing.B) {
	srv := newFixtureServer(b, echoManifest, echoCaller{}, Options{})
	line := largeEchoCall("," + benchMeta + "}}")
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		resp := srv.HandleStateless(context.Background(), req(b, line), nil)
		if resp == nil || resp.Error != nil {
			b.Fatalf("reply %+v", resp)
		}
	}
}

// BenchmarkStatelessRetry measures an MRTR retry: a 2026-07-28 call that
// brings its answer and the requestState of the round before, which nexus
// opens and checks against the call's arguments.
func BenchmarkStatelessRetry(b *testing.B) {
	srv := newFixtureServer(b, askManifest, newFakePool(), Options{})
	first := srv.HandleStateless(context.Background(), req(b, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"_1":"Name?"},`+benchMeta+`}}`), nil)
	out, err := json.Marshal(first)
	if err != nil {
		b.Fatal(err)
	}
	var round struct {
		Result struct {
			InputRequests map[string]any `json:"inputRequests"`
			RequestState  string         `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &round); err != nil || len(round.Result.InputRequests) != 1 {
		b.Fatalf("round 1: %s", out)
	}
	var key string
	for k := range round.Result.InputRequests {
		key = k
	}
	line := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"_1":"Name?"},` +
		`"inputResponses":{"` + key + `":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + round.Result.RequestState + `",` + benchMeta + `}}`
	b.ReportAllocs()
	for b.Loop() {
		resp := srv.HandleStateless(context.Background(), req(b, line), nil)
		out, _ := json.Marshal(resp)
		if !strings.Contains(string(out), `Hello, Ada!`) {
			b.Fatalf("retry: %s", out)
		}
	}
}
