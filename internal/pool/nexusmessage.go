package pool

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// protocolVersion is the version of the pool protocol (docs/internals.md)
// this package speaks; it also serves pools of version 1, which have no
// arrays.
const protocolVersion = 2

// Message types (docs/internals.md, "Messages").
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

// appendCall writes a call message (after frameHeader bytes of room) with
// its arguments as they are: nexus made them, compact and valid.
// takes adds ret.Args, the arguments' declared types.
func appendCall(id uint64, mid int, args []json.RawMessage, progress bool, arrays []ndarray.Array, ret *ndarray.Ret, takes bool) []byte {
	size := frameHeader + 96
	for _, a := range args {
		size += len(a) + 1
	}
	if ret != nil {
		size += len(ret.Type) + len(ret.Args)
	}
	b := make([]byte, frameHeader, size)
	b = append(b, `{"type":"call","id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"mid":`...)
	b = strconv.AppendInt(b, int64(mid), 10)
	b = append(b, `,"args":[`...)
	for i, a := range args {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, a...)
	}
	b = append(b, `],"progress":`...)
	b = strconv.AppendBool(b, progress)
	if len(arrays) > 0 {
		b = append(b, `,"arrays":`...)
		b = ndarray.AppendDescriptors(b, arrays)
	}
	if ret != nil && ret.Rank > 0 {
		b = append(b, `,"ret":`...)
		b = ndarray.AppendRet(b, ret)
	}
	if ret != nil && len(ret.Type) > 0 {
		b = append(b, `,"returns":`...)
		b = append(b, ret.Type...)
	}
	if takes && ret != nil && len(ret.Args) > 0 {
		b = append(b, `,"takes":`...)
		b = append(b, ret.Args...)
	}
	return append(b, '}')
}

// cancelFrame is a cancel message after frameHeader bytes of room.
func cancelFrame(id uint64) []byte {
	return fmt.Appendf(make([]byte, frameHeader, 48), `{"type":%q,"id":%d}`, typeCancel, id)
}

var shutdownFrame = []byte(`{"type":"shutdown"}`)

// inbound holds every member a pool → nexus message may carry; which ones
// are set depends on Type. Values stay raw so that integers of any width
// reach the caller untouched.
type inbound struct {
	Type string  `json:"type"`
	ID   *uint64 `json:"id"`
	id   uint64  // where ID points when read in place: no allocation of its own

	// ready
	Protocol   int             `json:"protocol"`
	Lang       string          `json:"lang"`
	PID        int             `json:"pid"`
	Mids       []int64         `json:"mids"`
	Concurrent *bool           `json:"concurrent"`
	DTypes     []ndarray.DType `json:"-"` // ready's "arrays": the dtypes the pool takes

	// result; Arrays is also ready's list of dtypes
	Arrays json.RawMessage `json:"arrays"`

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

	// ask (ask.go): Ask is the runtime's number for it, unique in the call
	Ask    *int64          `json:"ask"`
	Kind   string          `json:"kind"`
	Key    string          `json:"key"`
	Params json.RawMessage `json:"params"`
}

// decodeInbound parses one message's payload and checks the members the
// message's type requires. It walks the object in place: a result's value
// (which may be large) is a slice of payload, checked for syntax but never
// decoded; the small members are decoded one by one. Member names match
// exactly.
func decodeInbound(payload []byte) (*inbound, error) {
	var m inbound
	bad := func(format string, args ...any) error {
		return protocolErrorf("bad message %.200q: %s", payload, fmt.Sprintf(format, args...))
	}
	start := jsontext.SkipSpace(payload, 0)
	if start >= len(payload) || payload[start] != '{' {
		if _, _, err := jsontext.Whole(payload); err != nil {
			return nil, bad("%v", err)
		}
		return nil, bad("not a JSON object")
	}
	end, err := jsontext.Object(payload, start, func(key []byte, escaped bool, vs, ve int) error {
		name := string(key[1 : len(key)-1])
		if escaped {
			name = jsontext.Unquote(key)
		}
		raw := json.RawMessage(payload[vs:ve])
		// The members every message has, read without reflection.
		switch name {
		case "type", "message", "level":
			if v, ok := jsontext.DecodeString(raw); ok {
				switch name {
				case "type":
					m.Type = v
				case "message":
					m.Message = v
				default:
					m.Level = v
				}
				return nil
			}
		case "id":
			if v, ok := jsontext.ParseInt64(raw); ok && v >= 0 {
				m.id = uint64(v)
				m.ID = &m.id
				return nil
			}
		}
		var target any
		switch name {
		case "value":
			m.Value = raw
		case "content":
			m.Content = raw
		case "data":
			m.Data = raw
		case "arrays":
			m.Arrays = raw
		case "params":
			m.Params = raw
		case "ask":
			if v, ok := jsontext.ParseInt64(raw); ok {
				m.Ask = &v
			}
			return nil // not an integer: an ask message without one is refused below
		case "kind":
			target = &m.Kind
		case "key":
			target = &m.Key
		case "type":
			target = &m.Type
		case "id":
			m.ID = nil
			target = &m.ID
		case "protocol":
			target = &m.Protocol
		case "lang":
			target = &m.Lang
		case "pid":
			target = &m.PID
		case "mids":
			target = &m.Mids
		case "concurrent":
			target = &m.Concurrent
		case "message":
			target = &m.Message
		case "traceback":
			target = &m.Traceback
		case "cancelled":
			target = &m.Cancelled
		case "progress":
			target = &m.Progress
		case "total":
			target = &m.Total
		case "level":
			target = &m.Level
		}
		if target != nil {
			if err := json.Unmarshal(raw, target); err != nil {
				return fmt.Errorf("member %q: %v", name, err)
			}
		}
		return nil
	}, 1)
	if err == nil {
		if rest := jsontext.SkipSpace(payload, end); rest != len(payload) {
			err = fmt.Errorf("data after the object")
		}
	}
	if err != nil {
		return nil, bad("%v", err)
	}
	if m.Type == "" {
		return nil, protocolErrorf("message without a type: %.200q", payload)
	}
	switch m.Type {
	case typeResult, typeError, typeProgress, typeAsk:
		if m.ID == nil {
			return nil, protocolErrorf("%s message without an id: %.200q", m.Type, payload)
		}
	}
	if m.Type == typeProgress && m.Progress == nil {
		return nil, protocolErrorf("progress message without a progress value: %.200q", payload)
	}
	if m.Type == typeAsk && (m.Ask == nil || m.Kind == "") {
		return nil, protocolErrorf("ask message without an integer ask and a kind: %.200q", payload)
	}
	if m.Type == typeResult && (m.Value == nil || string(m.Value) == "null") {
		m.Value = json.RawMessage("null")
	}
	if string(m.Content) == "null" {
		m.Content = nil
	}
	if string(m.Arrays) == "null" {
		m.Arrays = nil
	}
	if m.Type == typeReady && m.Arrays != nil {
		if err := json.Unmarshal(m.Arrays, &m.DTypes); err != nil {
			return nil, protocolErrorf("ready message: arrays must be a list of dtypes: %.200q", payload)
		}
		m.Arrays = nil
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
