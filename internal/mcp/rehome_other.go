//go:build !linux

package mcp

import "os"

// RehomeStdout is a no-op off Linux: the protocol keeps descriptor 1.
func RehomeStdout() (*os.File, error) { return os.Stdout, nil }
