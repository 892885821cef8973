package eval

import (
	"fmt"
	"strings"
)

// ErrorKind classifies an evaluation error.
type ErrorKind int

const (
	// Thrown is a user error: @throw, a failed @read, @save or @load.
	// It is the only kind @catch intercepts (docs/spec.md §7.3.12).
	Thrown ErrorKind = iota
	// Internal is morloc's "internal error": an unbound variable, a pattern
	// or bracket error, a @save level outside 0..9, a @show or @hash
	// failure, a value whose shape is not its type's. @catch lets it pass.
	Internal
	// Unsupported is a feature nexus does not have: morloc's binary formats
	// (voidstar packets, stream files) and the handle intrinsics that need
	// them. @catch lets it pass, so that a missing feature is never
	// silently replaced by a fallback.
	Unsupported
	// Limit is a bound of Limits reached (steps, memory, depth), or the
	// context cancelled. @catch lets it pass.
	Limit
)

var errorKindNames = [...]string{"thrown", "internal", "unsupported", "limit"}

func (k ErrorKind) String() string { return nameIn(errorKindNames[:], int(k), "ErrorKind") }

// nameIn is names[i], else typ(i): how an enumeration's String reads.
func nameIn(names []string, i int, typ string) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", typ, i)
}

// Error is an evaluation failure. Its message is morloc's bare message:
// for @throw "PURE: boom int" it is exactly "PURE: boom int".
type Error struct {
	Kind ErrorKind
	Msg  string
	// Path is the JSON path of the expression node that failed, such as
	// "expr.body.args[0]"; empty when no single node is to blame.
	Path string
	err  error // a wrapped cause (the context's error for a cancellation)
}

func (e *Error) Error() string { return e.Msg }

// Unwrap gives the cause: context.Canceled or context.DeadlineExceeded for
// a cancelled evaluation.
func (e *Error) Unwrap() error { return e.err }

// FunctionFailed reports true: the program's own code failed, as a pool
// function that raises does (mcp's tasks tell a tool error by it).
func (e *Error) FunctionFailed() bool { return true }

// Catchable reports whether @catch intercepts the error.
func (e *Error) Catchable() bool { return e.Kind == Thrown }

func thrown(format string, a ...any) *Error {
	return &Error{Kind: Thrown, Msg: fmt.Sprintf(format, a...)}
}

func internal(format string, a ...any) *Error {
	return &Error{Kind: Internal, Msg: fmt.Sprintf(format, a...)}
}

func unsupported(format string, a ...any) *Error {
	return &Error{Kind: Unsupported, Msg: fmt.Sprintf(format, a...)}
}

// CompileError is a malformed expression tree: the JSON path of the fault
// inside the command's expr, and what is wrong there.
type CompileError struct {
	Path string // "expr.body.args[1]"
	Msg  string
}

func (e *CompileError) Error() string { return e.Path + ": " + e.Msg }

// ArgError is an argument value that does not read as its type. Index
// counts from 0 over the manifest's args, as morloc's message does.
type ArgError struct {
	Index int
	Msg   string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("failed to parse argument #%d: %s", e.Index, e.Msg)
}

// truncate shortens a text quoted in a message.
func truncate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= 80 {
		return s
	}
	end := 77
	for end > 0 && s[end]&0xC0 == 0x80 {
		end--
	}
	return s[:end] + "..."
}
