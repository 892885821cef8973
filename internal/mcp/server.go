// Package mcp owns the Model Context Protocol side of nexus: the JSON-RPC 2.0
// layer (jsonrpc.go), the protocol eras and what each version shows
// (era.go; the stateless 2026-07-28 rules in stateless.go), the stdio
// transport (stdio.go, serve_stdio.go), the MCP methods a tool server
// answers (session.go: lifecycle, logging/setLevel, cancellation;
// tools.go: tools/list pages, tools/call, progress, content; tasks.go:
// tools/call as a task, tasks/* in both eras; taskinput.go: MRTR rounds
// before a task), the program's resources and prompts (catalog.go: what
// the manifest declares, bound to the tools behind it; resources.go,
// files.go, prompts.go, complete.go, subscribe.go; invoke.go: a function
// called for a request other than tools/call), and log messages to clients
// (logging.go: a function's own records, and LogHub for nexus's warnings).
// It reaches the language pools only through the small Caller interface,
// which package pool implements.
//
// # Transport-facing API
//
// A transport (stdio here, Streamable HTTP in package httpserve) does:
//
//   - ParseMessages(body) splits one incoming message (a line, an HTTP body)
//     into Items; batch reports a JSON array. An Item holds either a Request
//     to handle or a Reply to send as is (a parse or shape fault); an Item
//     with neither needs nothing.
//   - Server.NewSession(notify) opens a conversation; notify receives the
//     session's server notifications.
//   - Session.Handle(ctx, req, notify) answers one request (nil for a
//     notification or a request the client cancelled). notify receives what
//     this request produces while it runs (notifications/progress,
//     notifications/message), so HTTP can answer that request with an SSE
//     stream; nil means the session's notify. Session.HandleBatch does the
//     same for a batch, replies in request order.
//   - Eras (docs/spec.md §4.3): a request opened by initialize belongs to the
//     handshake era and a session keeps its rules; IsStateless(req) is true
//     for server/discover and for any request naming a version in
//     params._meta, and Session.Handle serves those statelessly whatever the
//     session's state. Server.HandleStateless(ctx, req, notify) serves such a
//     request without any session. IsInitialize, RequestVersion,
//     Session.Version and Session.Initialized tell a transport what it needs
//     (e.g. when to mint an Mcp-Session-Id and which version header to
//     expect); SupportedVersions lists every version.
//   - Session.Close cancels whatever the session still runs and takes the
//     session off Options.Logs; call it when the client is gone.
//   - Server.SetTools swaps in a new tool surface and caller (hot reload,
//     surface.go), SetSurface the same with the programs' Catalog;
//     NotifyToolsChanged then tells sessions whose notify is their only
//     stream (stdio), and ToolsChangedNotification is the message for a
//     transport that routes it itself (HTTP).
//   - Server.EndSubscriptions ends the subscriptions/listen streams, which
//     would run for ever: call it when the input ends or the drain begins.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/generation"
	"github.com/nexus-mcp/nexus/internal/ndarray"
)

// CallHooks carries what a running function may send back before its result.
type CallHooks struct {
	// Progress reports a step of a long call (MCP notifications/progress).
	Progress func(progress float64, total *float64, message string)
	// Log forwards a log record the function wrote.
	Log func(level string, data json.RawMessage)
	// Content receives the MCP content blocks (a JSON array) a function
	// answered with, before Call returns; the client sees them in place of
	// the value's text.
	Content func(blocks json.RawMessage)
	// Ask carries a request the function makes of the client (kind
	// "elicit", "sample" or "roots"; params the MCP request's params) and
	// returns the client's result object. It may block until the client
	// answers; ctx ends with the call.
	Ask func(ctx context.Context, q Question) (json.RawMessage, error)
	// Inline, when set, lets the call wait on the goroutine that reads
	// stdin (inline.go); only an InlineCaller is given one.
	Inline *InlineWait
}

// Caller runs one call (its command, in the pool its manifest names, with
// one JSON value per manifest argument and the arrays among them) and
// returns the result, which may hold arrays too. The call is the
// Caller's: nexus reads neither call.Arrays nor their data once Call has
// them, so a pool may let a large argument go once it is sent (pool's
// CallOptions.GiveArrays). Cancelling ctx must
// interrupt the call and make Call return promptly. A server of several
// programs routes by call.Command, which belongs to exactly one manifest.
type Caller interface {
	Call(ctx context.Context, call argmap.Call, hooks CallHooks) (ndarray.Value, error)
}

// Options tune a Server; zero values take the defaults.
type Options struct {
	Logger *slog.Logger
	// MaxLine caps one stdio message (default 64 MiB).
	MaxLine int
	// MaxInFlight bounds concurrently running requests per session; the
	// reader waits when it is reached (default 256).
	MaxInFlight int
	// DrainTimeout is how long in-flight calls may run on after stdin closes
	// (default 30s).
	DrainTimeout time.Duration
	// CacheTTL is the ttlMs hint on 2026-07-28 tools/list and server/discover
	// results: how long a client may keep the tool surface. Default 1h, as
	// it never changes while nexus runs; with ListChanged 0, since it may
	// change at any moment (a client asks again each time).
	CacheTTL time.Duration
	// ListChanged says the tool surface may change while nexus runs (nexus
	// --watch, see SetTools): initialize declares tools.listChanged true.
	ListChanged bool
	// PageSize is the number of tools per tools/list page (default
	// DefaultPageSize).
	PageSize int
	// Logs, when set, sends nexus's own log records to the sessions that ask
	// for them (logging/setLevel); every session joins it.
	Logs *LogHub
	// OnCall, when set, learns how each tools/call ended and how long it
	// took (nexus serve's /metrics). tool is "" for a name that is no tool.
	OnCall func(tool string, outcome Outcome, took time.Duration)
	// StateKey signs the requestState of 2026-07-28 input_required results
	// (HMAC-SHA256). Nodes behind one load balancer share it, so that a
	// retry may reach any of them; nil picks a random key for this process.
	StateKey []byte
	// StateTTL is how long a requestState is accepted (default
	// DefaultStateTTL).
	StateTTL time.Duration
	// MaxTasks caps the tasks that exist at once, running or kept for
	// their ttl (default DefaultMaxTasks; tasks.go).
	MaxTasks int
	// TaskInputSettle is how long a "taskInput":"before" call runs with no
	// question unanswered before it becomes a task (default
	// DefaultTaskInputSettle; taskinput.go).
	TaskInputSettle time.Duration
	// OutputDir is nexus's own output directory, where functions may
	// write the files they return (NEXUS_OUTPUT_DIR in their pools); a
	// file result there is served, as one in its program's directory is.
	OutputDir string
	// WatchDebounce is how long after a subscribed file's last change
	// notifications/resources/updated is sent (default 100ms).
	WatchDebounce time.Duration
	// NoViews turns MCP Apps views off (apps.go): no client sees them.
	NoViews bool
}

// Outcome is how a tools/call ended, as the client saw it.
type Outcome string

const (
	OutcomeOK            Outcome = "ok"             // a result
	OutcomeError         Outcome = "isError"        // a result with isError: the function failed, its pool died, a wrong-typed result
	OutcomeProtocolError Outcome = "protocol_error" // a JSON-RPC error: unknown tool, invalid arguments
	OutcomeTimeout       Outcome = "timeout"        // isError: the call's timeout passed
	OutcomeCancelled     Outcome = "cancelled"      // the client cancelled it
	OutcomeInputRequired Outcome = "input_required" // 2026-07-28: the function asked the client something (MRTR)
)

// timeoutReporter is how a Caller's error says it is a timeout (as net.Error
// does), so that mcp need not know the pool's types.
type timeoutReporter interface{ Timeout() bool }

// FunctionFailure is how a Caller's error says that the function itself
// failed (it raised, or a pure command threw): a tool error, as opposed to
// its pool or nexus failing around it. Its text is the function's own
// message. mcp and httpserve tell it apart by this, not by the pool's or
// the evaluator's types.
type FunctionFailure interface {
	error
	FunctionFailed() bool
}

// OutcomeOf classifies what a Caller returned for a call whose context is ctx.
func OutcomeOf(ctx context.Context, err error) Outcome {
	var te timeoutReporter
	switch {
	case err == nil:
		return OutcomeOK
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return OutcomeCancelled
	case errors.As(err, &te) && te.Timeout():
		return OutcomeTimeout
	}
	return OutcomeError
}

// DefaultPageSize is the number of tools per tools/list page.
const DefaultPageSize = 100

// Implementation is MCP's serverInfo.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Server holds what every session shares: the tool surface and the pools,
// swapped as one by SetTools, and the live sessions.
type Server struct {
	surface *generation.Cell[surface]
	opts    Options
	log     *slog.Logger

	sessionsMu sync.Mutex
	sessions   map[*Session]struct{}
	tasks      *taskStore
	// stateKey signs requestStates (mrtr.go).
	stateKey []byte
	// files are the files functions wrote and nexus serves (files.go).
	files *fileStore
	// subs are the resource subscriptions and change listeners (subscribe.go).
	subs *subscriptions
}

// NewServer builds a server for one program's tools.
func NewServer(info Implementation, tools []*argmap.Tool, caller Caller, opts Options) *Server {
	return NewServerFor(Surface{Info: info, Tools: tools, Caller: caller}, opts)
}

// NewServerFor builds a server for a surface: tools, and the resources and
// prompts of its catalog.
func NewServerFor(in Surface, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxLine <= 0 {
		opts.MaxLine = DefaultMaxLine
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 256
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 30 * time.Second
	}
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = time.Hour
		if opts.ListChanged {
			opts.CacheTTL = 0
		}
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.StateTTL <= 0 {
		opts.StateTTL = DefaultStateTTL
	}
	s := &Server{surface: generation.NewCell(newSurface(in)), opts: opts, log: opts.Logger,
		sessions: map[*Session]struct{}{}, tasks: newTaskStore(opts.MaxTasks), stateKey: opts.StateKey,
		files: newFileStore(), subs: newSubscriptions()}
	if len(s.stateKey) == 0 {
		s.stateKey = newStateKey()
	}
	return s
}
