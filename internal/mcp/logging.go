package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
)

// logLevels are MCP's log levels (RFC 5424 severities), least severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// levelRank orders a level; -1 for a name that is not a level.
func levelRank(level string) int { return slices.Index(logLevels, level) }

// levelOfSlog maps a slog level to MCP's.
func levelOfSlog(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "error"
	case l >= slog.LevelWarn:
		return "warning"
	case l >= slog.LevelInfo:
		return "info"
	}
	return "debug"
}

// admits reports whether a message at level passes the threshold min ("" admits nothing).
func admits(min, level string) bool {
	if min == "" {
		return false
	}
	r := levelRank(level)
	return r >= 0 && r >= levelRank(min)
}

type logMessageParams struct {
	Level  string `json:"level"`
	Logger string `json:"logger,omitempty"`
	Data   any    `json:"data"`
}

func logMessage(level, logger string, data any) *Notification {
	return &Notification{Method: "notifications/message", Params: &logMessageParams{Level: level, Logger: logger, Data: data}}
}

// LogHub is a slog.Handler for nexus's own records (a pool that died and
// was restarted, a call that timed out...): it passes each record on to
// the next handler (stderr) and also sends it, as notifications/message, to
// every handshake-era session that chose a level with logging/setLevel and
// whose level admits it. Give it to the code whose warnings clients should
// see (the pools) and to Options.Logs, through which sessions join it.
type LogHub struct {
	next  slog.Handler
	attrs []slog.Attr // from WithAttrs, already qualified by groups
	group string      // from WithGroup, "a.b."
	hub   *hubSessions
}

type hubSessions struct {
	mu       sync.Mutex
	sessions map[*Session]struct{}
}

// NewLogHub wraps next, which still receives every record it is enabled for.
func NewLogHub(next slog.Handler) *LogHub {
	return &LogHub{next: next, hub: &hubSessions{sessions: map[*Session]struct{}{}}}
}

func (h *LogHub) join(ss *Session) {
	h.hub.mu.Lock()
	h.hub.sessions[ss] = struct{}{}
	h.hub.mu.Unlock()
}

func (h *LogHub) leave(ss *Session) {
	h.hub.mu.Lock()
	delete(h.hub.sessions, ss)
	h.hub.mu.Unlock()
}

// listeners returns the sessions whose level admits level.
func (h *LogHub) listeners(level string) []*Session {
	h.hub.mu.Lock()
	defer h.hub.mu.Unlock()
	var out []*Session
	for ss := range h.hub.sessions {
		if admits(ss.LogLevel(), level) {
			out = append(out, ss)
		}
	}
	return out
}

// Enabled implements slog.Handler.
func (h *LogHub) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l) || len(h.listeners(levelOfSlog(l))) > 0
}

// Handle implements slog.Handler.
func (h *LogHub) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.next.Enabled(ctx, r.Level) {
		err = h.next.Handle(ctx, r)
	}
	level := levelOfSlog(r.Level)
	sessions := h.listeners(level)
	if len(sessions) == 0 {
		return err
	}
	data := map[string]any{"message": r.Message}
	for _, a := range h.attrs {
		addAttr(data, "", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		addAttr(data, h.group, a)
		return true
	})
	n := logMessage(level, "nexus", data)
	for _, ss := range sessions {
		ss.notify(n)
	}
	return err
}

// addAttr flattens an attribute into data under its dotted key.
func addAttr(data map[string]any, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range v.Group() {
			addAttr(data, p, g)
		}
		return
	}
	if a.Key == "" {
		return
	}
	switch v.Kind() {
	case slog.KindAny:
		if e, ok := v.Any().(error); ok {
			data[prefix+a.Key] = e.Error()
			return
		}
		if _, err := json.Marshal(v.Any()); err != nil {
			data[prefix+a.Key] = v.String()
			return
		}
		data[prefix+a.Key] = v.Any()
	case slog.KindDuration:
		data[prefix+a.Key] = v.Duration().String()
	case slog.KindTime:
		data[prefix+a.Key] = v.Time()
	default:
		data[prefix+a.Key] = v.Any()
	}
}

// WithAttrs implements slog.Handler.
func (h *LogHub) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(attrs)
	c.attrs = slices.Clone(h.attrs)
	for _, a := range attrs {
		a.Key = h.group + a.Key
		c.attrs = append(c.attrs, a)
	}
	return &c
}

// WithGroup implements slog.Handler.
func (h *LogHub) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.next = h.next.WithGroup(name)
	c.group = h.group + name + "."
	return &c
}
