package pool

import (
	"encoding/json"
	"fmt"
	"log/slog"
)

// protocolVersion is the version of docs/pool-protocol.md this package speaks.
const protocolVersion = 1

// Message types (docs/pool-protocol.md, "Messages").
const (
	typeReady    = "ready"
	typeCall     = "call"
	typeResult   = "result"
	typeError    = "error"
	typeProgress = "progress"
	typeLog      = "log"
	typeCancel   = "cancel"
	typeShutdown = "shutdown"
)

// callMessage is the only nexus → pool message with a body worth a type.
type callMessage struct {
	Type     string            `json:"type"`
	ID       uint64            `json:"id"`
	Mid      int               `json:"mid"`
	Args     []json.RawMessage `json:"args"`
	Progress bool              `json:"progress"`
}

func cancelFrame(id uint64) []byte {
	return fmt.Appendf(nil, `{"type":%q,"id":%d}`, typeCancel, id)
}

var shutdownFrame = []byte(`{"type":"shutdown"}`)

// inbound holds every member a pool → nexus message may carry; which ones
// are set depends on Type. Values stay raw so that integers of any width
// reach the caller untouched.
type inbound struct {
	Type string  `json:"type"`
	ID   *uint64 `json:"id"`

	// ready
	Protocol   int     `json:"protocol"`
	Lang       string  `json:"lang"`
	PID        int     `json:"pid"`
	Mids       []int64 `json:"mids"`
	Concurrent *bool   `json:"concurrent"`

	// result
	Value   json.RawMessage `json:"value"`
	Content json.RawMessage `json:"content"`

	// error; Message is also progress's message
	Message   string `json:"message"`
	Traceback string `json:"traceback"`
	Cancelled bool   `json:"cancelled"`

	// progress
	Progress *float64 `json:"progress"`
	Total    *float64 `json:"total"`

	// log
	Level string          `json:"level"`
	Data  json.RawMessage `json:"data"`
}

// decodeInbound parses one frame's payload and checks the members the
// message's type requires.
func decodeInbound(payload []byte) (*inbound, error) {
	var m inbound
	if err := json.Unmarshal(payload, &m); err != nil {
		return nil, protocolErrorf("bad message %.200q: %v", payload, err)
	}
	if m.Type == "" {
		return nil, protocolErrorf("message without a type: %.200q", payload)
	}
	switch m.Type {
	case typeResult, typeError, typeProgress:
		if m.ID == nil {
			return nil, protocolErrorf("%s message without an id: %.200q", m.Type, payload)
		}
	}
	if m.Type == typeProgress && m.Progress == nil {
		return nil, protocolErrorf("progress message without a progress value: %.200q", payload)
	}
	if m.Type == typeResult && m.Value == nil {
		m.Value = json.RawMessage("null")
	}
	if string(m.Content) == "null" {
		m.Content = nil
	}
	return &m, nil
}

// checkContent reports what is wrong with a result's content member, which
// must be an array of objects with a string "type" (MCP content blocks).
// nexus passes the blocks on as they are; this only keeps a pool's mistake
// from reaching a client as a malformed result.
func checkContent(content json.RawMessage) error {
	var blocks []struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(content, &blocks); err != nil {
		return fmt.Errorf("content is not an array of content blocks: %v", err)
	}
	for i, b := range blocks {
		if b.Type == nil {
			return fmt.Errorf("content block %d has no type", i)
		}
	}
	return nil
}

// logLevels maps the MCP (syslog) levels a pool may log at to slog levels.
var logLevels = map[string]slog.Level{
	"debug":     slog.LevelDebug,
	"info":      slog.LevelInfo,
	"notice":    slog.LevelInfo,
	"warning":   slog.LevelWarn,
	"error":     slog.LevelError,
	"critical":  slog.LevelError,
	"alert":     slog.LevelError,
	"emergency": slog.LevelError,
}

// normalLevel returns level if it is an MCP level, else "info".
func normalLevel(level string) string {
	if _, ok := logLevels[level]; ok {
		return level
	}
	return "info"
}
