package httpserve

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// connCount counts the server's open connections (http.Server.ConnState):
// two atomic adds a connection, none a request.
type connCount struct{ open atomic.Int64 }

func (c *connCount) track(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		c.open.Add(1)
	case http.StateClosed, http.StateHijacked:
		c.open.Add(-1)
	}
}

// drainPoll is how often a drain looks whether the last connection closed.
const drainPoll = 5 * time.Millisecond

// drain ends serving so that a node behind a load balancer can restart
// without failing a request (docs/deploy.md, "Draining"): the listener
// closes at once, so the balancer's next connection is refused and it
// tries another node; every connection already accepted is served to the
// end, each closing after its response; after Grace, what still runs is
// cancelled, and graceOver says so.
//
// It does not use http.Server.Shutdown, which drops a request it reads
// after shutdown began (net/http's conn.serve): a connection accepted just
// before the listener closed would lose its only request, which the
// balancer must not re-send (it may have run), so its client would get 502.
func (s *Server) drain(hs *http.Server, ln net.Listener, hardStop func()) (graceOver bool) {
	s.log.Info("draining: refusing new connections, letting calls in flight finish", "grace", s.cfg.Grace)
	s.closeOne.Do(func() { close(s.closing) }) // GET streams would hold the drain for all of Grace
	s.mcp.EndSubscriptions()                   // and so would subscriptions/listen streams
	hs.SetKeepAlivesEnabled(false)             // each connection ends with its response; idle ones close now
	closeListener(ln, s.log)
	if s.tls != nil { // not hs.TLSConfig: Serve sets one for HTTP/2 on any listener
		// An HTTP/2 connection ends only with a GOAWAY, which net/http
		// sends from Shutdown alone. Over TLS, then, a request read just
		// after it began may be dropped as described above; load
		// balancers reach nodes over plain HTTP, where this never runs.
		go hs.Shutdown(context.Background()) //nolint:errcheck // ends with hs.Close below
	}
	deadline := time.Now().Add(s.cfg.Grace)
	for s.conns.open.Load() > 0 {
		if time.Now().After(deadline) {
			s.log.Warn("grace period over: cancelling the calls still running")
			hardStop()
			hs.Close()
			done := make(chan struct{})
			go func() { s.inflight.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				s.log.Warn("some requests did not end after cancellation")
			}
			return true
		}
		time.Sleep(drainPoll)
	}
	hs.Close()
	return false
}
