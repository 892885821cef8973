package mcp

import (
	"fmt"
	"os"
	"syscall"
)

// RehomeStdout keeps the protocol stream to itself (docs/spec.md §4.1): it
// copies descriptor 1 to a private close-on-exec descriptor, returned for
// the protocol, and points descriptor 1 at stderr, so any stray write by a
// Go library, a pool's print, a C++ std::cout or a child process of a pool
// (which inherit descriptor 1) lands on stderr. Call it before any pool
// starts.
func RehomeStdout() (*os.File, error) {
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("rehome stdout: dup: %w", err)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Dup3(2, 1, 0); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("rehome stdout: dup3: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/stdout (protocol)"), nil
}
