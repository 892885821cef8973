package e2e

import (
	"encoding/json"
	"testing"
)

// A function that answers with content blocks (nexus.Content) reaches the
// client as those blocks (docs/internals.md, "Content blocks").
func TestContentBlocksReachTheClient(t *testing.T) {
	s := startServer(t, unruly())
	s.handshake()
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plot","arguments":{"_1":"a plot"}}}`)
	line := s.recvRaw()
	var r struct {
		Result struct {
			Content []map[string]any `json:"content"`
			IsError bool             `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	want := []map[string]any{
		{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
		{"type": "text", "text": "a plot"},
	}
	got, _ := json.Marshal(r.Result.Content)
	wantJSON, _ := json.Marshal(want)
	if r.Result.IsError || string(got) != string(wantJSON) {
		t.Errorf("plot: %s\nwant content %s", line, wantJSON)
	}
}
