package mcp

import (
	"bufio"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// stdioPeer drives ServeStdio through pipes.
type stdioPeer struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func serveStdio(t *testing.T, srv *Server) *stdioPeer {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, lines: make(chan string, 100), done: make(chan error, 1)}
	go func() {
		p.done <- srv.ServeStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Error("ServeStdio did not return after EOF")
		}
	})
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

func (p *stdioPeer) recv() string {
	p.t.Helper()
	select {
	case l := <-p.lines:
		return l
	case <-time.After(10 * time.Second):
		p.t.Fatal("no reply within 10s")
		return ""
	}
}

const initLine = `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`

func TestBatchTranscripts(t *testing.T) {
	const initReply = `{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"t","version":"1.2.3"}}}`
	tests := []struct {
		name  string
		lines []string // sent in order
		want  []string // lines received in order
	}{
		{"empty array", []string{`[]`},
			[]string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: empty batch array"}}`}},
		{"array of one non-object", []string{`[1]`},
			[]string{`[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: expected a JSON-RPC object, got number"}}]`}},
		{"array of three non-objects", []string{`[1,"a",null]`},
			[]string{`[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: expected a JSON-RPC object, got number"}},` +
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: expected a JSON-RPC object, got string"}},` +
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: expected a JSON-RPC object, got null"}}]`}},
		{"broken JSON in a batch", []string{`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc"]`},
			[]string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON: invalid character ']' after object key"}}`}},
		{"handshake inside one batch, then a line", []string{
			`[` + initLine + `,{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"_1":1}}},{"jsonrpc":"2.0","id":3,"method":"ping"}]`,
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"_1":41}}}`,
		}, []string{
			`[` + initReply + `,{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"2"}],"isError":false}},{"jsonrpc":"2.0","id":3,"result":{}}]`,
			`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"42"}],"isError":false}}`,
		}},
		{"only notifications: no reply at all", []string{
			`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/whatever"}]`,
			`{"jsonrpc":"2.0","id":9,"method":"ping"}`,
		}, []string{`{"jsonrpc":"2.0","id":9,"result":{}}`}},
		{"mixed valid and invalid, replies in request order", []string{
			initLine,
			`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"_1":"x"}}},{"jsonrpc":"1.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"nope"},{"jsonrpc":"2.0","method":"nope"},{"jsonrpc":"2.0","id":4,"result":{}},{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"_1":4}}}]`,
		}, []string{
			initReply,
			`[{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"argument '_1' of 'add': expected integer, got string"}},` +
				`{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}},` +
				`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: nope"}},` +
				`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"5"}],"isError":false}}]`,
		}},
		{"a call cancelled inside its batch has no reply", []string{
			initLine,
			`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		}, []string{initReply, `[{"jsonrpc":"2.0","id":2,"result":{}}]`}},
		{"stateless batch", []string{
			`[{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta("2026-07-28", "") + `}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"_1":1},` + meta("2026-07-28", "") + `}},{"jsonrpc":"2.0","id":3,"method":"ping","params":{` + meta("2026-07-28", "") + `}}]`,
		}, []string{
			`[{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"tools":{}},"ttlMs":3600000,"cacheScope":"public","resultType":"complete",` + serverMeta + `}},` +
				`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"2"}],"isError":false,"resultType":"complete",` + serverMeta + `}},` +
				`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: ping (protocol 2026-07-28)"}}]`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := serveStdio(t, newTestServer(t, &fakePool{}, Options{}))
			for _, l := range tt.lines {
				p.send(l)
			}
			var got []string
			for range tt.want {
				got = append(got, p.recv())
			}
			want := tt.want
			// A batch's reply waits for its calls: a later line may overtake it.
			if strings.Contains(tt.name, "then a line") {
				want, got = slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("line %d:\n got %s\nwant %s", i, got[i], want[i])
				}
			}
		})
	}
}
