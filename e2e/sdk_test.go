package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official go-sdk client, an independent implementation, lists and
// calls tools over stdio at protocol 2025-06-18.
func TestGoSDKClientStdio(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := connectGoSDK(t, ctx, sdk.NewClient(&sdk.Implementation{Name: "e2e-go-sdk", Version: "0"}, nil), "stdio", "2025-06-18", program("shapes"))
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-06-18" {
		t.Errorf("negotiated %q, want 2025-06-18", v)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"addInt", "person", "configure", "pureAnswer"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s (got %v)", want, names)
		}
	}
	for _, excluded := range []string{"readStdin", "tableSum"} {
		if names[excluded] {
			t.Errorf("excluded command %s is listed", excluded)
		}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "addInt", Arguments: map[string]any{"_1": 41}})
	if err != nil {
		t.Fatalf("tools/call addInt: %v", err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*sdk.TextContent).Text != "42" {
		t.Errorf("addInt(41) = %+v, want text 42", res)
	}
	// A record return carries structuredContent matching its outputSchema.
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "person", Arguments: map[string]any{"_1": "Ada", "_2": 36}})
	if err != nil {
		t.Fatalf("tools/call person: %v", err)
	}
	sc, _ := json.Marshal(res.StructuredContent)
	var rec map[string]any
	if res.IsError || json.Unmarshal(sc, &rec) != nil || rec["name"] != "Ada" {
		t.Errorf("person: structuredContent %s (isError %v), want a record with name Ada", sc, res.IsError)
	}
	// A function that raises comes back as isError, not a protocol error.
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "fail", Arguments: map[string]any{"_1": "x"}})
	if err != nil || !res.IsError {
		t.Errorf("fail: err %v, result %+v; want an isError result", err, res)
	}
}
