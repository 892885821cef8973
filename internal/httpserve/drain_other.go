//go:build !linux

package httpserve

import (
	"log/slog"
	"net"
)

// closeListener stops accepting.
func closeListener(ln net.Listener, _ *slog.Logger) { ln.Close() }
