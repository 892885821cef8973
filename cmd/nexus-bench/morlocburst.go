package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/morlocload"
)

// Bursts: calls sent all at once, as an agent sends tool calls in
// parallel, to nexus over MCP on stdio (with its default workers and with
// -morloc-workers) and to morloc's own daemon over HTTP, all serving the
// bench program: -morloc-sleeps sleeps of -morloc-sleep-ms (how many run
// at once), and -morloc-mixed calls whose results pass 64 KiB
// (internal/morlocload: Python echoes, C++ scalings, Python ranges, R
// ramps), every answer compared with its expected value. A wrong answer
// from nexus fails the run; morloc's daemon's are counted, since its
// answers are what nexus is compared with.

// burst is what one burst gave: its wall time, from the first request
// sent to the last reply read, and what was wrong, call by call.
type burst struct {
	wall  time.Duration
	wrong []string
}

// burstServer is one of the servers a burst goes to.
type burstServer struct {
	name string // in the rows' measure: "MCP stdio, default workers"
	// send makes one burst of calls.
	send func(calls []morlocload.Call) (burst, error)
	// daemon: morloc's own, whose wrong answers are counted, not failed on.
	daemon bool
}

// sendBurst writes every call to nexus before any reply is read (from
// another goroutine, so that neither pipe fills up), then reads a reply
// for each; nexus is killed if it all takes longer than timeout.
func (s *session) sendBurst(calls []morlocload.Call, timeout time.Duration) (burst, error) {
	first := s.nextID
	s.nextID += len(calls)
	timer := time.AfterFunc(timeout, func() { s.cmd.Process.Kill() })
	defer timer.Stop()
	t0 := time.Now()
	wrote := make(chan error, 1)
	go func() {
		var line []byte
		for i, c := range calls {
			line = callLine(line[:0], first+i, c.Tool, string(c.Arguments()))
			if err := s.write(line); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	var b burst
	seen := make([]bool, len(calls))
	for got := 0; got < len(calls); {
		line, err := s.readLine()
		if err != nil {
			return b, s.failure("a burst of "+strconv.Itoa(len(calls))+" calls", err)
		}
		id, ok := replyID(line)
		if !ok {
			continue // a notification
		}
		i := id - first
		if i < 0 || i >= len(calls) || seen[i] {
			return b, fmt.Errorf("unexpected or repeated reply id %d: %.300s", id, line)
		}
		seen[i] = true
		got++
		if why := mcpWrong(calls[i], line); why != "" {
			b.wrong = append(b.wrong, fmt.Sprintf("call %d (%s): %s", i, calls[i].Tool, why))
		}
	}
	b.wall = time.Since(t0)
	if err := <-wrote; err != nil {
		return b, s.failure("writing a burst", err)
	}
	return b, nil
}

// mcpWrong says what is wrong with a tools/call reply to c, or "".
func mcpWrong(c morlocload.Call, line []byte) string {
	var r struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	switch err := json.Unmarshal(line, &r); {
	case err != nil:
		return fmt.Sprintf("the reply is not JSON (%v): %.200s", err, line)
	case r.Error != nil:
		return "error: " + r.Error.Message
	case len(r.Result.Content) == 0:
		return fmt.Sprintf("no content: %.200s", line)
	case r.Result.IsError:
		return fmt.Sprintf("isError: %.200s", r.Result.Content[0].Text)
	}
	if err := c.Check([]byte(r.Result.Content[0].Text)); err != nil {
		return err.Error()
	}
	return ""
}

// daemonBurst POSTs every call to morloc's daemon at once, one connection
// each, and checks each answer ({"status":"ok","result":VALUE}); a failed
// request is a wrong answer too.
func daemonBurst(client *http.Client, base string, calls []morlocload.Call) burst {
	wrong := make([]string, len(calls))
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, c := range calls {
		wg.Go(func() {
			var buf bytes.Buffer
			if err := postCall(client, base+"/call/"+c.Tool, string(c.List()), &buf); err != nil {
				wrong[i] = err.Error()
				return
			}
			var r struct {
				Status string          `json:"status"`
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(buf.Bytes(), &r); err != nil || r.Status != "ok" {
				wrong[i] = fmt.Sprintf("%.200s", buf.Bytes())
				return
			}
			if err := c.Check(r.Result); err != nil {
				wrong[i] = err.Error()
			}
		})
	}
	wg.Wait()
	b := burst{wall: time.Since(t0)}
	for i, w := range wrong {
		if w != "" {
			b.wrong = append(b.wrong, fmt.Sprintf("call %d (%s): %s", i, calls[i].Tool, w))
		}
	}
	return b
}

// morlocBursts measures the bursts on nexus (s: the phase's session with
// its default workers, and a second nexus with -morloc-workers) and on
// morloc's daemon at daemonBase ("" when it did not start), and adds
// their rows.
func (b *bench) morlocBursts(m *morlocBench, s *session, daemonBase string) {
	servers := []burstServer{{name: "MCP stdio, default workers", send: func(c []morlocload.Call) (burst, error) { return s.sendBurst(c, b.cfg.callTimeout) }}}
	workers := strconv.Itoa(b.cfg.morlocWorkers)
	maxLine := strconv.Itoa(64 << 20)
	wsrv := burstServer{name: "MCP stdio, --workers " + workers}
	if w, err := b.startNexusEnv("morloc-mcp-workers", m.env, "mcp", m.launcher, "--workers", workers, "--max-line", maxLine, "--timeout", b.cfg.callTimeout.String()); err != nil {
		wsrv.send = func([]morlocload.Call) (burst, error) { return burst{}, err }
	} else {
		ws := &session{proc: w, r: bufio.NewReaderSize(w.stdout, 1<<20), nextID: 1, deadline: b.cfg.callTimeout}
		defer func() {
			if err := ws.stop(time.Minute); err != nil {
				b.fail("morloc pools: %v", ws.failure("stopping nexus --workers "+workers, err))
			}
		}()
		wsrv.send = func(c []morlocload.Call) (burst, error) { return ws.sendBurst(c, b.cfg.callTimeout) }
		if err := ws.handshake(); err != nil {
			wsrv.send = func([]morlocload.Call) (burst, error) { return burst{}, err }
		}
	}
	servers = append(servers, wsrv)
	if daemonBase != "" {
		// A connection per call: the daemon closes each. A call it has
		// not answered in 2 minutes (it may hang once its shared memory
		// is corrupt) is a wrong answer, not a wait of -call-timeout.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}, Timeout: min(b.cfg.callTimeout, 2*time.Minute)}
		servers = append(servers, burstServer{name: "HTTP, morloc's daemon", daemon: true,
			send: func(c []morlocload.Call) (burst, error) { return daemonBurst(client, daemonBase, c), nil }})
	}

	secs := float64(b.cfg.morlocSleepMs) / 1000
	sleeps := make([]morlocload.Call, b.cfg.morlocSleeps)
	for i := range sleeps {
		sleeps[i] = morlocload.Sleep(secs)
	}
	mixed := morlocload.Mixed(b.cfg.morlocMixed, b.cfg.langs...)
	var daemon *[2]burst
	results := make([]*[2]burst, len(servers)) // sleeps, mixed; nil: failed
	for k, srv := range servers {
		r, err := runBursts(srv, sleeps, mixed)
		if err != nil {
			b.fail("morloc pools: bursts on %s: %v", srv.name, err)
			continue
		}
		results[k] = &r
		if srv.daemon {
			daemon = &r
		}
	}
	for k, srv := range servers {
		if results[k] == nil {
			b.add(row{section: secMorloc, lang: "py", what: fmt.Sprintf("%d × sleepPy at once over %s", len(sleeps), srv.name), text: "FAILED", floor: none})
			continue
		}
		b.morlocSleepRow(srv, results[k][0], len(sleeps), secs)
	}
	for k, srv := range servers {
		if results[k] == nil {
			b.add(row{section: secMorloc, lang: "mixed", what: fmt.Sprintf("%d mixed shared-memory calls at once over %s", len(mixed), srv.name), text: "FAILED", floor: none})
			continue
		}
		b.morlocMixedRows(srv, results[k][1], mixed, daemon)
	}
}

// runBursts warms srv up, then times a burst of sleeps and one of mixed
// calls. Warm-up is one call of each kind alone, then a burst of sleeps,
// so that every pool (and every process a server starts on demand) is up
// before anything is timed; nexus's wrong answers fail it here too.
func runBursts(srv burstServer, sleeps, mixed []morlocload.Call) ([2]burst, error) {
	var out [2]burst
	progress("morloc pools: bursts on %s: warming up", srv.name)
	warm := make([][]morlocload.Call, 0, 5)
	for _, c := range mixed[:min(len(mixed), 4)] {
		warm = append(warm, []morlocload.Call{c})
	}
	for _, calls := range append(warm, sleeps) {
		r, err := srv.send(calls)
		if err != nil {
			return out, fmt.Errorf("warming up: %w", err)
		}
		if len(r.wrong) > 0 && !srv.daemon {
			return out, fmt.Errorf("warming up: WRONG: %s", strings.Join(r.wrong, "\n"))
		}
	}
	for j, calls := range [][]morlocload.Call{sleeps, mixed} {
		progress("morloc pools: a burst of %d calls on %s", len(calls), srv.name)
		r, err := srv.send(calls)
		if err != nil {
			return out, err
		}
		out[j] = r
	}
	return out, nil
}

// morlocSleepRow is a burst of sleeps beside the ideal: all at once.
func (b *bench) morlocSleepRow(srv burstServer, r burst, n int, secs float64) {
	ideal := secs * 1000
	row := row{section: secMorloc, lang: "py", what: fmt.Sprintf("%d × sleepPy(%s) at once over %s: wall", n, num(secs), srv.name),
		value: ms(r.wall), unit: "ms", floor: ideal, vs: ratio(ms(r.wall), ideal),
		details: fmt.Sprintf("floor: one sleep, as when all %d run at once; one after another: %s ms", n, num(ideal*float64(n)))}
	b.judge(srv, &row, r, n)
	b.add(row)
}

// morlocMixedRows are the mixed burst's throughput, beside morloc's
// daemon's when it ran, and its wrong answers.
func (b *bench) morlocMixedRows(srv burstServer, r burst, calls []morlocload.Call, daemon *[2]burst) {
	n := len(calls)
	perSec := float64(n) / r.wall.Seconds()
	floor, vs, details := none, "", ""
	if daemon != nil && !srv.daemon {
		floor = float64(n) / daemon[1].wall.Seconds()
		vs = ratio(perSec, floor)
		details = fmt.Sprintf("floor: morloc's daemon on the same calls (%d of them wrong); ", len(daemon[1].wrong))
	}
	kinds := map[string]int{}
	var order []string
	for _, c := range calls {
		if kinds[c.Tool] == 0 {
			order = append(order, c.Tool)
		}
		kinds[c.Tool]++
	}
	var mix []string
	for _, t := range order {
		mix = append(mix, fmt.Sprintf("%d × %s", kinds[t], t))
	}
	details += fmt.Sprintf("wall %s ms; %s, each result over 64 KiB (shared memory), every answer compared with its expected value", num(ms(r.wall)), strings.Join(mix, ", "))
	what := fmt.Sprintf("%d mixed shared-memory calls at once over %s", n, srv.name)
	tput := row{section: secMorloc, lang: "mixed", what: what + ": calls/s", value: perSec, unit: "calls/s", floor: floor, vs: vs, details: details}
	b.judge(srv, &tput, r, n)
	b.add(tput)
	wrongRow := row{section: secMorloc, lang: "mixed", what: what + ": wrong answers", text: strconv.Itoa(len(r.wrong)), unit: "calls", floor: none,
		details: fmt.Sprintf("of %d", n)}
	if len(r.wrong) > 0 {
		wrongRow.details += "; the first: " + r.wrong[0]
	}
	b.add(wrongRow)
}

// judge marks a nexus row WRONG, and fails the run, when a call of its
// burst was answered wrong; morloc's daemon's wrong answers are said in
// the details only.
func (b *bench) judge(srv burstServer, r *row, res burst, n int) {
	if len(res.wrong) == 0 {
		return
	}
	r.details += fmt.Sprintf("; %d of %d answers wrong", len(res.wrong), n)
	if srv.daemon {
		return
	}
	r.text, r.vs = "WRONG", ""
	b.fail("morloc pools: %s: %d of %d answers WRONG:\n%s", r.what, len(res.wrong), n, strings.Join(res.wrong[:min(len(res.wrong), 5)], "\n"))
}
