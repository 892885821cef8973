package program

import (
	"errors"
	"fmt"
	"io"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// ExitError carries the exit status of a failed command; a plain one is
// written "Error: <message>", as morloc's nexus writes its failures.
type ExitError struct {
	Code  int
	Err   error
	Plain bool
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// UsageError is a command line nexus cannot take: exit status 2.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Usagef makes a UsageError.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }

func isUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// ExitStatus is the status nexus exits with after err: 2 for a command
// line it cannot take or a program it cannot find, an ExitError's own,
// else 1.
func ExitStatus(err error) int {
	if errors.Is(err, manifest.ErrNotFound) || isUsage(err) {
		return 2
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}

// writeFailure writes err as nexus's last line: in morloc's words for a
// plain ExitError, else prefixed with nexus.
func writeFailure(w io.Writer, err error) {
	var ee *ExitError
	if errors.As(err, &ee) && ee.Plain {
		fmt.Fprintf(w, "Error: %v\n", err)
		return
	}
	fmt.Fprintf(w, "nexus: %v\n", err)
}
