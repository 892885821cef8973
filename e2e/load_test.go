package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// callRecord is one stateless tools/call sent through the balancer, and
// what came back.
type callRecord struct {
	id         int64 // JSON-RPC id, unique
	tool       string
	arg        int64 // unique per tool: the reply must hold its answer
	sent, done time.Time
	status     int    // HTTP status; 0 when the request failed in transport
	node       string // Nexus-Node of the reply, "" when nginx answered
	ok         bool   // 200 with this request's id and the expected value
	err        string
}

// load sends a steady stream of stateless (2026-07-28) tools/call requests
// through a cluster's nginx from several clients: fast ones calling addInt
// (x → x+1) and slow ones calling sleepMs (sleeps x ms, returns x). Every
// request carries a unique id and argument, and every reply is matched to
// its request.
type load struct {
	t      *testing.T
	c      *cluster
	client *http.Client
	seq    atomic.Int64 // ids, and addInt's arguments
	slow   atomic.Int64 // sleepMs' arguments
	gate   sync.RWMutex // each request holds it shared; pause takes it whole
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	records  []*callRecord
	inflight map[int64]time.Time // id → sent, of requests not yet answered
}

func startLoad(t *testing.T, c *cluster, fast, slow int) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{t: t, c: c, cancel: cancel, inflight: map[int64]time.Time{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: fast + slow + 4}}}
	for i := 0; i < fast+slow; i++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for ctx.Err() == nil {
				if i < fast {
					l.call(ctx, "addInt", l.seq.Add(1), func(x int64) int64 { return x + 1 })
				} else {
					// From 150 ms, one more for each slow call: unique.
					l.call(ctx, "sleepMs", 150+l.slow.Add(1), func(x int64) int64 { return x })
				}
			}
		}()
	}
	t.Cleanup(l.stop)
	return l
}

// call sends one request and records it; the gate is held while it runs.
func (l *load) call(ctx context.Context, tool string, arg int64, want func(int64) int64) {
	l.gate.RLock()
	defer l.gate.RUnlock()
	if ctx.Err() != nil {
		return
	}
	r := &callRecord{id: l.seq.Add(1), tool: tool, arg: arg, sent: time.Now()}
	l.mu.Lock()
	l.inflight[r.id] = r.sent
	l.mu.Unlock()
	body := statelessCallBody(int(r.id), tool, fmt.Sprintf(`{"_1":%d}`, arg), "")
	// No context of the run's: a request once sent is always waited for.
	rctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	status, h, reply, err := l.c.post(rctx, l.client, body, statelessHeaders(tool)...)
	cancel()
	r.done, r.status = time.Now(), status
	switch {
	case err != nil:
		r.err = err.Error()
	case status != 200:
		r.err = fmt.Sprintf("HTTP %d: %.200s", status, reply)
	default:
		r.node = h.Get("Nexus-Node")
		r.err = checkReply(reply, r.id, strconv.FormatInt(want(arg), 10))
		r.ok = r.err == ""
	}
	l.mu.Lock()
	l.records = append(l.records, r)
	delete(l.inflight, r.id)
	l.mu.Unlock()
}

// checkReply says what is wrong with a tools/call reply, or "".
func checkReply(body string, id int64, text string) string {
	var m struct {
		ID     int64 `json:"id"`
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return "reply is not JSON: " + body
	}
	if m.ID != id || m.Error != nil || m.Result.IsError || len(m.Result.Content) != 1 || m.Result.Content[0].Text != text {
		return fmt.Sprintf("want id %d and %s, got %.300s", id, text, body)
	}
	return ""
}

// pause waits for the requests in flight and holds new ones back.
func (l *load) pause()  { l.gate.Lock() }
func (l *load) resume() { l.gate.Unlock() }

// waitSentBefore waits until every request sent before t is answered.
func (l *load) waitSentBefore(t time.Time) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		left := 0
		for _, sent := range l.inflight {
			if sent.Before(t) {
				left++
			}
		}
		l.mu.Unlock()
		if left == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	l.t.Fatalf("requests sent before %v still unanswered after 60s", t)
}

func (l *load) stop() {
	l.cancel()
	l.wg.Wait()
	l.client.CloseIdleConnections()
}

// snapshot copies the records so far.
func (l *load) snapshot() []*callRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.records)
}

// okByNode counts the successful replies by the node that answered.
func okByNode(records []*callRecord) map[string]int {
	n := map[string]int{}
	for _, r := range records {
		if r.ok {
			n[r.node]++
		}
	}
	return n
}

// percentile of the latencies of records (sent to done), q in [0, 1].
func percentile(records []*callRecord, q float64) time.Duration {
	if len(records) == 0 {
		return 0
	}
	d := make([]time.Duration, len(records))
	for i, r := range records {
		d[i] = r.done.Sub(r.sent)
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(q*float64(len(d))))]
}

// between keeps the records sent in [from, to).
func between(records []*callRecord, from, to time.Time) []*callRecord {
	var out []*callRecord
	for _, r := range records {
		if !r.sent.Before(from) && r.sent.Before(to) {
			out = append(out, r)
		}
	}
	return out
}
