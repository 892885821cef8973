package mcp

import (
	"context"
	"strings"

	"github.com/nexus-mcp/nexus/internal/argmap"
)

// Access limits what one request's client may use: over HTTP with OAuth,
// the tools its token's scopes cover (docs/auth.md). A transport hands it
// in with WithAccess; a request without one may use everything. A tool it
// refuses is left out of tools/list, and so are the resource templates
// and prompts its command computes; calling it, reading such a resource
// or getting such a prompt is refused with CodeInsufficientScope before
// anything reaches a pool.
type Access interface {
	// Check returns the scopes tool needs (all of them, so that a client
	// can ask for them in one step) and whether the client has them.
	Check(tool *argmap.Tool) (need []string, ok bool)
}

// CodeInsufficientScope refuses a request for a tool, resource or prompt
// that the request's Access does not cover; its data is an
// InsufficientScope. Over HTTP it comes with 403 and an insufficient_scope
// challenge, so that a client can ask for the scope and retry.
const CodeInsufficientScope = -32003

// InsufficientScope is the data of a CodeInsufficientScope error.
type InsufficientScope struct {
	// Scope lists every scope the request needs.
	Scope []string `json:"scope"`
}

type accessKey struct{}

// WithAccess limits the request served under ctx to what a allows.
func WithAccess(ctx context.Context, a Access) context.Context {
	return context.WithValue(ctx, accessKey{}, a)
}

func accessFrom(ctx context.Context) Access {
	a, _ := ctx.Value(accessKey{}).(Access)
	return a
}

// allowed reports whether the request may use tool (a listing's filter).
func allowed(ctx context.Context, tool *argmap.Tool) bool {
	a := accessFrom(ctx)
	if a == nil || tool == nil {
		return true
	}
	_, ok := a.Check(tool)
	return ok
}

// refusal is the error for a use of tool (subject names it: "tool 'x'")
// that the request's access does not allow; nil when it does.
func refusal(ctx context.Context, tool *argmap.Tool, subject string) *Error {
	a := accessFrom(ctx)
	if a == nil {
		return nil
	}
	need, ok := a.Check(tool)
	if ok {
		return nil
	}
	return &Error{Code: CodeInsufficientScope,
		Message: "insufficient scope: " + subject + " needs scope '" + strings.Join(need, " ") + "'",
		Data:    &InsufficientScope{Scope: need}}
}

// cacheScope is a list's 2026-07-28 cacheScope: private when the request's
// access filtered it, as then it is this client's own.
func cacheScope(ctx context.Context) string {
	if accessFrom(ctx) != nil {
		return "private"
	}
	return "public"
}

// visible is the part of list that the request may see, in order; list
// itself when it may see all.
func visible[T any](ctx context.Context, list []T, tool func(T) *argmap.Tool) []T {
	if accessFrom(ctx) == nil {
		return list
	}
	out := make([]T, 0, len(list))
	for _, it := range list {
		if allowed(ctx, tool(it)) {
			out = append(out, it)
		}
	}
	return out
}
