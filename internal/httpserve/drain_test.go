package httpserve

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A drain refuses new connections at once but answers a request that
// arrives, after the drain began, on a connection accepted before it: a
// balancer sent that request to this node and may not send it elsewhere
// (http.Server.Shutdown would drop it unanswered). Idle keep-alive
// connections are closed, and answers end their connection.
func TestDrainServesAcceptedConnections(t *testing.T) {
	s, err := New(Config{Grace: 10 * time.Second, Logger: quietLogger()}, []Program{loadProgram(t, "shapes", &fakeCaller{})})
	if err != nil {
		t.Fatal(err)
	}
	var accepts *acceptSignal
	addr, stop, served := serveLoopback(t, s, func(ln net.Listener) net.Listener {
		accepts = &acceptSignal{Listener: ln, accepted: make(chan struct{}, 8)}
		return accepts
	})

	// idle has served a request and waits, kept alive; early is accepted
	// but has sent nothing yet.
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	idleReader := bufio.NewReader(idle)
	io.WriteString(idle, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if resp, err := http.ReadResponse(idleReader, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /health before the drain: %v %v", resp, err)
	} else {
		io.ReadAll(resp.Body)
	}
	early, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()
	for range 2 { // idle's, then early's: accepted by the server
		select {
		case <-accepts.accepted:
		case <-time.After(time.Minute):
			t.Fatal("the server did not accept the connections within a minute")
		}
	}

	stop()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break // refused: the drain has begun
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("new connections are still accepted 30s after the drain began")
		}
		time.Sleep(5 * time.Millisecond)
	}

	io.WriteString(early, "POST /call/shapes/addInt HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 4\r\n\r\n[41]")
	early.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(early), nil)
	if err != nil {
		t.Fatalf("a request on a connection accepted before the drain was not answered: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"result":42`) || !resp.Close {
		t.Errorf("during the drain: %d %s (close %v), want 200 with the result and Connection: close", resp.StatusCode, body, resp.Close)
	}

	idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := idleReader.Read(make([]byte, 1)); err == nil {
		t.Errorf("the idle keep-alive connection is still open during the drain (read %d bytes)", n)
	}
	waitServed(t, served, 5*time.Second, "Serve did not return once its connections closed")
}

// acceptSignal tells of each connection the server has accepted.
type acceptSignal struct {
	net.Listener
	accepted chan struct{}
}

func (l *acceptSignal) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		select {
		case l.accepted <- struct{}{}:
		default:
		}
	}
	return c, err
}
