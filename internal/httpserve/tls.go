package httpserve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// checkTLS refuses half a TLS setup, which would serve plain HTTP where the
// user asked for HTTPS (docs/http.md, "HTTPS and HTTP/3").
func (c *Config) checkTLS() error {
	switch {
	case c.TLSCert != "" && c.TLSKey == "":
		return errors.New("--tls-cert needs --tls-key (the certificate's private key)")
	case c.TLSKey != "" && c.TLSCert == "":
		return errors.New("--tls-key needs --tls-cert (the certificate it belongs to)")
	case c.HTTP3 && c.TLSCert == "":
		return errors.New("--http3 needs --tls-cert and --tls-key: QUIC always runs over TLS")
	}
	return nil
}

// loadTLS reads the certificate and its key; nil when TLS is off. It runs
// in New, so that a bad file is refused before anything listens.
func (c *Config) loadTLS() (*tls.Config, error) {
	if c.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s, --tls-key %s: %w", c.TLSCert, c.TLSKey, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// scheme is what clients put before the server's address.
func (s *Server) scheme() string {
	if s.tls != nil {
		return "https"
	}
	return "http"
}

// URL is the MCP endpoint's address for clients once ln is bound, https
// when the server speaks TLS.
func (s *Server) URL(ln net.Listener) string {
	host, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		return s.scheme() + "://" + ln.Addr().String() + "/mcp"
	}
	return endpointURL(s.scheme(), host, port)
}

// dualListener is a bound TCP port with the UDP socket of the same number,
// which HTTP/3 serves on. Closing it closes only TCP: http.Server closes
// its listener when shutdown begins, while QUIC requests may still run.
type dualListener struct {
	net.Listener
	udp net.PacketConn
}

// listenDual binds TCP and UDP on one port number. With port 0 the kernel
// picks a TCP port whose UDP twin may be taken: then it tries another.
func (s *Server) listenDual() (net.Listener, error) {
	for try := 1; ; try++ {
		ln, err := net.Listen("tcp", s.Addr())
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", s.Addr(), err)
		}
		udp, err := net.ListenPacket("udp", ln.Addr().String())
		if err == nil {
			return &dualListener{Listener: ln, udp: udp}, nil
		}
		ln.Close()
		if s.cfg.Port != 0 || try == 10 {
			return nil, fmt.Errorf("listen on udp %s for HTTP/3: %w", ln.Addr(), err)
		}
	}
}

// quicServer is the HTTP/3 side of a Server: the same handler, guard
// included, over QUIC.
type quicServer struct {
	srv    *http3.Server
	udp    net.PacketConn
	altSvc []string // the Alt-Svc value TCP responses carry
	// running counts the QUIC requests being handled: http.Server's
	// Shutdown waits for TCP ones, nothing in http3.Server for these alone.
	running atomic.Int64
	// drained is closed when graceful shutdown is over: every client has
	// closed its connection after GOAWAY, or the grace period ended.
	drained chan struct{}
}

// quicKeepAlive keeps a QUIC connection alive while a call runs for minutes
// without a byte to send: QUIC closes a connection silent for its idle
// timeout (30 s by default), HTTP/3 keeps requests open. quic-go pings at
// the lesser of this and half the idle timeout the peers agreed on; idle
// connections still end after Config.IdleTimeout, which PINGs do not reset.
const quicKeepAlive = 15 * time.Second

// startQUIC prepares HTTP/3 on the UDP port numbered as ln's TCP port,
// binding it if Listen did not; nil when HTTP/3 is off.
func (s *Server) startQUIC(ln net.Listener) (*quicServer, error) {
	if !s.cfg.HTTP3 {
		return nil, nil
	}
	var udp net.PacketConn
	if d, ok := ln.(*dualListener); ok {
		udp = d.udp
	} else {
		var err error
		if udp, err = net.ListenPacket("udp", ln.Addr().String()); err != nil {
			return nil, fmt.Errorf("listen on udp %s for HTTP/3: %w", ln.Addr(), err)
		}
	}
	port := udp.LocalAddr().(*net.UDPAddr).Port
	q := &quicServer{
		srv: &http3.Server{
			TLSConfig:      s.tls.Clone(),
			MaxHeaderBytes: 64 << 10,
			IdleTimeout:    s.cfg.IdleTimeout,
			QUICConfig: &quic.Config{
				// No 0-RTT: an early request can be replayed by anyone on
				// the path, and a replayed POST would run a function twice.
				Allow0RTT:       false,
				KeepAlivePeriod: quicKeepAlive,
			},
			Logger: s.log,
		},
		udp:     udp,
		drained: make(chan struct{}),
		// http3.Server.SetQUICHeaders writes the same value, but only once
		// its listener is up and with an allocation per response.
		altSvc: []string{http3.NextProtoH3 + `=":` + strconv.Itoa(port) + `"; ma=2592000`},
	}
	q.srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q.running.Add(1)
		defer q.running.Add(-1)
		s.handler.ServeHTTP(w, r)
	})
	s.log.Info("serving HTTP/3 (QUIC)", "udp", udp.LocalAddr().String())
	return q, nil
}

// serve answers HTTP/3 until shutdown; it returns http.ErrServerClosed then.
func (q *quicServer) serve() error { return q.srv.Serve(q.udp) }

// advertise makes every TCP response announce the QUIC endpoint (RFC 7838).
func (q *quicServer) advertise(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Alt-Svc"] = q.altSvc // canonical key: no per-request work
		next.ServeHTTP(w, r)
	})
}

// quicLinger bounds how long shutdown waits, once no request runs, for
// QUIC clients to close their connections. A client closes on GOAWAY once
// its requests are answered, so this wait lets the last responses reach
// it; an idle client that never closes does not hold shutdown longer.
const quicLinger = 2 * time.Second

// shutdown stops accepting QUIC connections and requests (GOAWAY) and
// returns at once; requests in flight go on. The caller waits for them,
// then calls linger.
func (q *quicServer) shutdown(ctx context.Context) {
	go func() {
		q.srv.Shutdown(ctx)
		close(q.drained)
	}()
}

// linger waits for the clients to close their connections, for at most
// quicLinger or until ctx ends.
func (q *quicServer) linger(ctx context.Context) {
	t := time.NewTimer(quicLinger)
	defer t.Stop()
	select {
	case <-q.drained:
	case <-t.C:
	case <-ctx.Done():
	}
}

// close ends every QUIC connection (cancelling requests still running)
// and releases the UDP socket.
func (q *quicServer) close() {
	q.srv.Close()
	q.udp.Close()
}

// wait waits for the QUIC requests being handled to end, until ctx ends.
// Shutdown is rare: polling keeps the request path to two atomic adds.
func (q *quicServer) wait(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for q.running.Load() > 0 {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
