package main

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"time"
)

var listeningRE = regexp.MustCompile(`listening on (http://\S+)/mcp`)

// httpCase is one kind of request of the HTTP phase.
type httpCase struct {
	what    string
	path    string
	body    []byte
	headers map[string]string
	want    [][]byte // every one must be in a correct reply
}

func (b *bench) httpCases(lang string) []httpCase {
	tool := "add_" + lang
	return []httpCase{
		{
			what: "POST /call/" + b.name + "/" + tool + " [1,2]",
			path: "/call/" + b.name + "/" + tool,
			body: []byte(`[1,2]`),
			want: [][]byte{[]byte(`"status":"ok"`), []byte(`"result":3`)},
		},
		{
			// 2026-07-28 is stateless: the version in params._meta, and the
			// routing headers, which must match the body.
			what: "POST /mcp stateless tools/call " + tool,
			path: "/mcp",
			body: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, tool),
			headers: map[string]string{
				"Accept":               "application/json, text/event-stream",
				"MCP-Protocol-Version": "2026-07-28",
				"Mcp-Method":           "tools/call",
				"Mcp-Name":             tool,
			},
			want: [][]byte{[]byte(`"text":"3"`), []byte(`"isError":false`)},
		},
	}
}

// httpPhase runs nexus serve and measures requests/s of the plain JSON API
// and of stateless MCP with http-conns keep-alive clients.
func (b *bench) httpPhase() {
	p, base, stop := b.serveNexus("HTTP", "http", nil, b.cfg.program)
	if p == nil {
		return
	}
	defer stop()
	client := &http.Client{
		Transport: &http.Transport{MaxIdleConns: 4 * b.cfg.httpConns, MaxIdleConnsPerHost: 4 * b.cfg.httpConns, DisableCompression: true},
		Timeout:   b.cfg.callTimeout,
	}
	defer client.CloseIdleConnections()
	fam := family{nexus: p.pid()}
	for _, lang := range b.cfg.langs {
		for _, c := range b.httpCases(lang) {
			if err := b.httpRun(client, base, fam, lang, c); err != nil {
				b.fail("HTTP (%s): %s: %v", lang, c.what, err)
				b.add(row{section: secHTTP, lang: lang, what: c.what, text: "FAILED", floor: none})
			}
		}
	}
}

// do sends one request of c and checks the reply, reading the body into buf.
func (c *httpCase) do(client *http.Client, base string, buf *bytes.Buffer) error {
	req, err := http.NewRequest(http.MethodPost, base+c.path, bytes.NewReader(c.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.headers {
		req.Header[k] = []string{v} // as given: Mcp-Name stays as written
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, buf.Bytes())
	}
	for _, w := range c.want {
		if !bytes.Contains(buf.Bytes(), w) {
			return fmt.Errorf("WRONG answer (no %s): %.300s", w, buf.Bytes())
		}
	}
	return nil
}

func (b *bench) httpRun(client *http.Client, base string, fam family, lang string, c httpCase) error {
	progress("HTTP: %s, %d clients for %v", c.what, b.cfg.httpConns, b.cfg.httpTime)
	var buf bytes.Buffer
	// The first reply must be right before anything is timed.
	if err := c.do(client, base, &buf); err != nil {
		return err
	}
	// Every client and the pool warm up for a fifth of the time, untimed.
	if _, _, err := b.httpLoad(client, base, c, b.cfg.httpTime/5); err != nil {
		return err
	}
	c0 := b.sampleCPU(fam, lang)
	lat, wall, err := b.httpLoad(client, base, c, b.cfg.httpTime)
	if err != nil {
		return err
	}
	cpu := b.sampleCPU(fam, lang).sub(c0)
	n := float64(len(lat))
	l := latencies(lat)
	b.add(row{section: secHTTP, lang: lang, what: fmt.Sprintf("%s, %d clients", c.what, b.cfg.httpConns), value: n / wall.Seconds(), unit: "req/s", floor: none,
		details: fmt.Sprintf("%d requests; p50 %s µs, p99 %s µs; nexus CPU %s µs/request, the client's %s", len(lat), num(l.p50), num(l.p99), num(cpu.nexus/n), num(cpu.self/n))})
	return nil
}

// httpLoad runs http-conns clients, each sending c one request after the
// other, until d has passed; it returns every request's latency.
func (b *bench) httpLoad(client *http.Client, base string, c httpCase, d time.Duration) ([]time.Duration, time.Duration, error) {
	var (
		mu       sync.Mutex
		all      []time.Duration
		firstErr error
		wg       sync.WaitGroup
	)
	t0 := time.Now()
	end := t0.Add(d)
	for range b.cfg.httpConns {
		wg.Go(func() {
			var buf bytes.Buffer
			var mine []time.Duration
			var err error
			for time.Now().Before(end) {
				t := time.Now()
				if err = c.do(client, base, &buf); err != nil {
					break
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			all = append(all, mine...)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	if firstErr != nil {
		return nil, 0, firstErr
	}
	if len(all) == 0 {
		return nil, 0, fmt.Errorf("no request finished within %v", d)
	}
	return all, wall, nil
}
