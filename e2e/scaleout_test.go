package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// Three `nexus serve` nodes behind nginx, configured by docs/nginx as
// docs/deploy.md says ("Scale-out behind nginx"), under a steady load of
// stateless tools/call requests from six clients, plus one handshake-era
// session:
//
//   - stateless requests are balanced round-robin, and the session's
//     requests all reach the node that minted its id;
//   - a node is SIGKILLed: every request sent once its process is reaped
//     (its sockets closed, so nginx's connection is refused and it tries
//     the next node) is answered by the others; a request in flight on it,
//     or sent in the moment it takes to die, gets 502 from nginx;
//     sent = ok + failed, and no reply is lost or given twice;
//   - all three nodes restart one by one with SIGTERM (each drains: its
//     listener closes at once, its calls in flight finish): no request fails;
//   - at every pause of the load, each node's nexus_calls_total equals the
//     calls it answered (by the replies' Nexus-Node) since it started.
//
// The figures go to the log; docs/deploy.md states the outcome.
func TestScaleOutBehindNginx(t *testing.T) {
	testenv.Long(t)
	testenv.NeedPython(t)
	c := startCluster(t, clusterOptions{Program: program("shapes")})
	const fast, slow = 4, 2
	l := startLoad(t, c, fast, slow)

	// A node's process answers the calls counted by okByNode since
	// started[id], and the session's calls counted in sessionOK.
	started := map[string]int{}
	sessionOK := map[string]int{}
	restart := func(n *clusterNode, records []*callRecord) {
		started[n.id] = okByNode(records)[n.id]
		sessionOK[n.id] = 0
		c.restart(n)
	}
	checkpoint := func(phase string) {
		t.Helper()
		l.pause()
		defer l.resume()
		byNode := okByNode(l.snapshot())
		for _, n := range c.nodes {
			all, ok := callsTotal(n.metrics(t))
			want := byNode[n.id] - started[n.id] + sessionOK[n.id]
			if all != float64(want) || ok != float64(want) {
				t.Errorf("%s: node %s counts %v calls (%v ok), but answered %d", phase, n.id, all, ok, want)
			}
		}
	}

	// Round-robin: with every node up, nginx takes them in turn.
	for deadline := time.Now().Add(2 * time.Minute); len(l.snapshot()) < 40; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d requests answered in 2 minutes", len(l.snapshot()))
		}
	}
	checkpoint("balanced")
	records := l.snapshot()
	byNode := okByNode(records)
	counts := []int{byNode["n1"], byNode["n2"], byNode["n3"]}
	if len(records) < 30 || byNode["n1"]+byNode["n2"]+byNode["n3"] != len(records) || max(counts[0], counts[1], counts[2])-min(counts[0], counts[1], counts[2]) > 1 {
		t.Errorf("balanced: %d requests, answered by node %v: want every one answered, spread evenly", len(records), byNode)
	}

	// A handshake-era session sticks to the node that minted its id.
	ctx := context.Background()
	client := &http.Client{}
	status, h, body, err := c.post(ctx, client, httpInit)
	sid := h.Get("Mcp-Session-Id")
	if err != nil || status != 200 || sid == "" {
		t.Fatalf("initialize through nginx: %d %v %s", status, err, body)
	}
	home := regexp.MustCompile(`^(n[123])\.[0-9a-f]{64}$`).FindStringSubmatch(sid)
	if home == nil || h.Get("Nexus-Node") != home[1] {
		t.Fatalf("session id %q minted by node %q: want <node id>.<hex>", sid, h.Get("Nexus-Node"))
	}
	session := []string{"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"}
	if status, _, body, err := c.post(ctx, client, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session...); err != nil || status != 202 {
		t.Fatalf("notifications/initialized: %d %v %s", status, err, body)
	}
	sessionCall := func(i int) (int, string) {
		t.Helper()
		status, h, body, err := c.post(ctx, client, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"shout","arguments":{"_1":"call %d"}}}`, i, i), session...)
		if err != nil {
			t.Fatalf("session call %d: %v", i, err)
		}
		if status == 200 {
			if why := checkReply(body, int64(i), fmt.Sprintf(`"CALL %d!"`, i)); why != "" {
				t.Errorf("session call %d: %s", i, why)
			} else {
				sessionOK[h.Get("Nexus-Node")]++
			}
		}
		return status, h.Get("Nexus-Node")
	}
	for i := 1; i <= 10; i++ {
		if status, node := sessionCall(i); status != 200 || node != home[1] {
			t.Errorf("session call %d: %d from node %q, want 200 from %s", i, status, node, home[1])
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkpoint("session")
	for _, n := range c.nodes {
		want := 0.0
		if n.id == home[1] {
			want = 10
		}
		if got := sample(n.metrics(t), `nexus_calls_total{outcome="ok",program="shapes",tool="shout"}`); got != want {
			t.Errorf("node %s ran the session's tool %v times, want %v", n.id, got, want)
		}
	}

	// SIGKILL a node the session does not live on.
	victim := c.nodes[0]
	if victim.id == home[1] {
		victim = c.nodes[1]
	}
	pools := descendants(victim.srv.cmd.Process.Pid)
	time.Sleep(500 * time.Millisecond)
	killed := time.Now()
	victim.kill(t)
	reaped := time.Now()
	time.Sleep(1500 * time.Millisecond)
	l.waitSentBefore(reaped)
	waitGone(t, pools)
	records = l.snapshot()
	// Between SIGKILL and the reaping, the process is dying but its
	// sockets are still open: a connection made then may be reset.
	inFlight, dying := 0, 0
	for _, r := range records {
		switch {
		case r.ok:
		case !r.sent.Before(reaped):
			t.Errorf("request %d (%s %d) sent %v after the killed node was reaped failed: %s", r.id, r.tool, r.arg, r.sent.Sub(reaped), r.err)
		case r.status != http.StatusBadGateway || r.done.Before(killed):
			t.Errorf("request %d (%s %d) failed with %q: only a request in flight on the killed node may fail, with 502", r.id, r.tool, r.arg, r.err)
		case r.sent.Before(killed):
			inFlight++
		default:
			dying++
		}
	}
	if inFlight > fast+slow {
		t.Errorf("%d requests in flight at the kill failed, more than the %d clients had in flight", inFlight, fast+slow)
	}
	killWindow := between(records, killed, reaped.Add(time.Second))
	if len(killWindow) == 0 {
		t.Errorf("no request sent in the second after the kill")
	}
	restart(victim, records)
	checkpoint("after the kill")
	if status, node := sessionCall(11); status != 200 || node != home[1] {
		t.Errorf("session call after the kill: %d from %q, want 200 from %s", status, node, home[1])
	}

	// A rolling restart: each node in turn drains on SIGTERM, exits and
	// starts again on its port, under load all along.
	rolling := time.Now()
	for _, n := range c.nodes {
		checkpoint("before restarting " + n.id)
		time.Sleep(300 * time.Millisecond)
		// A call in flight on the node when it is told to stop must finish.
		// It is the node's one call in flight while the load pauses: once
		// it is in, the load resumes and the node is stopped.
		inFlight := func() float64 { return sample(n.metrics(t), `nexus_calls_in_flight{program="shapes"}`) }
		l.pause()
		for deadline := time.Now().Add(time.Minute); inFlight() != 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("node %s: calls in flight a minute after the load paused", n.id)
			}
		}
		direct := make(chan string, 1)
		go func() {
			resp, err := http.Post(n.srv.base+"/call/shapes/sleepMs", "application/json", strings.NewReader(`[1000]`))
			if err != nil {
				direct <- err.Error()
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			direct <- fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(b))
		}()
		for deadline := time.Now().Add(time.Minute); inFlight() < 1; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("node %s: the direct call was not in flight within a minute", n.id)
			}
		}
		l.resume()
		// Load calls join it, as a balancer's would (the log counts them).
		for deadline := time.Now().Add(5 * time.Second); inFlight() < 2 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		stopping := time.Now()
		n.terminate(t)
		exited := time.Now()
		if got := <-direct; got != `200 {"status":"ok","result":1000}` {
			t.Errorf("node %s: a call in flight at SIGTERM got %q, want it answered", n.id, got)
		}
		l.waitSentBefore(exited)
		records = l.snapshot()
		draining := 0
		for _, r := range records {
			if r.node == n.id && r.sent.Before(stopping) && r.done.After(stopping) {
				draining++
			}
		}
		t.Logf("node %s drained in %v, finishing %d load calls besides the direct one", n.id, exited.Sub(stopping).Round(time.Millisecond), draining)
		restart(n, records)
		time.Sleep(500 * time.Millisecond)
	}
	checkpoint("after the rolling restart")
	l.stop()
	records = l.snapshot()
	restartWindow := between(records, rolling, time.Now())
	for _, r := range restartWindow {
		if !r.ok {
			t.Errorf("request %d (%s %d) failed during the rolling restart: %s", r.id, r.tool, r.arg, r.err)
		}
	}
	// The session lived on a node that has restarted: it is gone, and the
	// client is told so (404: initialize again).
	if status, node := sessionCall(12); status != http.StatusNotFound {
		t.Errorf("session call after its node restarted: %d from %q, want 404", status, node)
	}

	failed := 0
	for _, r := range records {
		if !r.ok {
			failed++
		}
	}
	// Latency is addInt's (the slow clients' calls sleep on purpose).
	t.Logf("scale-out: %d requests, %d ok, %d failed; addInt latency p50 %v, p99 %v",
		len(records), len(records)-failed, failed, percentile(fastCalls(records), 0.50), percentile(fastCalls(records), 0.99))
	t.Logf("kill: %d requests in flight on the node and %d sent while it died (%v) failed (502); of the %d sent in the second after SIGKILL, the rest ok; addInt p99 in that second %v",
		inFlight, dying, reaped.Sub(killed).Round(time.Microsecond), len(killWindow), percentile(fastCalls(killWindow), 0.99))
	t.Logf("rolling restart: %d requests, 0 failed; addInt p50 %v, p99 %v",
		len(restartWindow), percentile(fastCalls(restartWindow), 0.50), percentile(fastCalls(restartWindow), 0.99))
}

func fastCalls(records []*callRecord) []*callRecord {
	var out []*callRecord
	for _, r := range records {
		if r.tool == "addInt" {
			out = append(out, r)
		}
	}
	return out
}
