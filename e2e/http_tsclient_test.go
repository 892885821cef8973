package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The TypeScript SDK's StreamableHTTPClientTransport, an independent client:
// handshake, a session id, tools, an isError result, progress over the
// request's stream, and cancellation reaching the function.
func TestHTTPTypeScriptSDKClient(t *testing.T) {
	node, dir := tsHTTPClient(t)
	srv := startHTTP(t, nil, "serve", "--port", "0", program("everything"))
	marker := filepath.Join(t.TempDir(), "cancelled")
	var got struct {
		ProtocolVersion string   `json:"protocolVersion"`
		SessionID       *string  `json:"sessionId"`
		ServerName      string   `json:"serverName"`
		Tools           []string `json:"tools"`
		SimpleText      []struct {
			Type, Text string
		} `json:"simpleText"`
		ErrorResult struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		} `json:"errorResult"`
		SlowCount string    `json:"slowCount"`
		Progress  []float64 `json:"progress"`
		Cancel    string    `json:"cancel"`
	}
	runNodeJSON(t, node, dir, &got, "ts-http-client.mjs", srv.url, marker)
	if got.ProtocolVersion != "2025-11-25" || got.SessionID == nil || len(*got.SessionID) != 64 {
		t.Errorf("protocol %q, session %v: want 2025-11-25 with a 64-character session id", got.ProtocolVersion, got.SessionID)
	}
	if got.ServerName != "everything" || len(got.Tools) < 12 || got.Tools[0] != "test_simple_text" {
		t.Errorf("server %q, tools %v", got.ServerName, got.Tools)
	}
	if len(got.SimpleText) != 1 || got.SimpleText[0].Type != "text" || got.SimpleText[0].Text != "This is a simple text response for testing." {
		t.Errorf("test_simple_text: %+v", got.SimpleText)
	}
	if !got.ErrorResult.IsError || !strings.Contains(got.ErrorResult.Text, "intentionally returns an error") {
		t.Errorf("test_error_handling: %+v", got.ErrorResult)
	}
	if got.SlowCount != "3" || fmt.Sprint(got.Progress) != "[1 2 3]" {
		t.Errorf("slow_count: %q with progress %v, want 3 with [1 2 3]", got.SlowCount, got.Progress)
	}
	if got.Cancel != "aborted" {
		t.Errorf("the long call %s, want aborted", got.Cancel)
	}
	waitForMarker(t, marker, 10*time.Second)
}
