package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// morlocHTTP times small calls over HTTP, warm, by nexus serve and by
// morloc's daemon at morlocBase (`LAUNCHER --daemon --http-port P`: POST
// /call/CMD with the arguments as a JSON list; "": it did not start), both
// serving the program at once, in alternating blocks. morloc's daemon
// closes every connection, so the client opens one per call to both.
func (b *bench) morlocHTTP(m *morlocBench, morlocBase string) {
	if morlocBase == "" {
		return
	}
	p, nexusBase, stop := b.serveNexus("morloc pools: HTTP", "morloc-http", m.env, m.launcher)
	if p == nil {
		return
	}
	defer stop()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}, Timeout: b.cfg.callTimeout}
	for _, l := range morlocLangs {
		if !slices.Contains(b.cfg.langs, l.lang) {
			continue
		}
		tool := "add" + l.suffix
		n := max(b.cfg.calls.of(l.lang)/5, 20)
		progress("morloc pools: %d × %s over HTTP, nexus serve and morloc's daemon in turn", n, tool)
		nexusURL := nexusBase + "/call/benchprog/" + tool
		morlocURL := morlocBase + "/call/" + tool
		var buf bytes.Buffer
		const blocks = 10
		ne, mo, err := interleave(blocks, func(isNexus bool) ([]time.Duration, error) {
			url := morlocURL
			if isNexus {
				url = nexusURL
			}
			return sequential(max(n/blocks, 2), func(i int) error {
				err := postCall(client, url, fmt.Sprintf("[%d,1000]", i), &buf)
				if err == nil && !bytes.Contains(buf.Bytes(), []byte(`"result":`+strconv.Itoa(i+1000))) {
					err = fmt.Errorf("WRONG answer: %.300s", buf.Bytes())
				}
				if err != nil {
					return fmt.Errorf("HTTP %s: %w", url, err)
				}
				return nil
			})
		})
		if err != nil {
			b.fail("morloc pools: %v", err)
			return
		}
		nl, ml := latencies(ne), latencies(mo)
		b.add(row{section: secMorloc, lang: l.lang, what: fmt.Sprintf("%s × %d over HTTP, a connection per call, warm: p50", tool, len(ne)), value: nl.p50, unit: "µs", floor: ml.p50, vs: ratio(nl.p50, ml.p50),
			details: fmt.Sprintf("floor: morloc's own daemon (--daemon --http-port); in alternating blocks; p90 nexus %s, morloc %s µs", num(nl.p90), num(ml.p90))})
	}
}

func postCall(client *http.Client, url, body string, buf *bytes.Buffer) error {
	resp, err := client.Post(url, "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	return err
}

// waitListening waits for nexus serve to say where it listens.
func waitListening(p *proc) (string, error) {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := listeningRE.FindStringSubmatch(p.stderr.String()); m != nil {
			return m[1], nil
		}
		select {
		case <-p.exited:
			return "", p.failure("nexus serve", fmt.Errorf("exited before listening"))
		default:
		}
		if time.Now().After(deadline) {
			return "", p.failure("nexus serve", fmt.Errorf("not listening after 30 s"))
		}
	}
}

// serveNexus starts nexus serve (run named run, env added) on target and
// waits until it listens: the process, its base URL, and stop, which stops
// it. A failure is the phase's (named by what), with a nil process.
func (b *bench) serveNexus(what, run string, env []string, target string) (p *proc, base string, stop func()) {
	p, err := b.startNexusEnv(run, env, "serve", "--port", "0", target)
	if err != nil {
		b.fail("%s: %v", what, err)
		return nil, "", nil
	}
	stop = func() { stopServe(b, p, what) }
	if base, err = waitListening(p); err != nil {
		b.fail("%s: %v", what, err)
		stop()
		return nil, "", nil
	}
	return p, base, stop
}

// stopServe stops nexus serve with SIGTERM, as a service manager does, and
// fails the phase (named by what) when it is still running 30 s later.
func stopServe(b *bench, p *proc, what string) {
	p.cmd.Process.Signal(syscall.SIGTERM)
	if !awaitExit(p.cmd, p.exited, 30*time.Second) {
		b.fail("%s: nexus serve did not stop within 30 s of SIGTERM", what)
	}
}

// stopMorlocDaemon stops morloc's daemon as its users do, with SIGTERM
// (it then stops its pools and removes its files), killing it after 10 s.
func stopMorlocDaemon(daemon *exec.Cmd) {
	daemon.Process.Signal(syscall.SIGTERM)
	waitOrKill(daemon, 10*time.Second)
}

// startMorlocDaemon starts morloc's nexus as an HTTP daemon on a free
// port and waits until GET /health answers.
func startMorlocDaemon(m *morlocBench) (*exec.Cmd, string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(m.launcher, "--daemon", "--http-port", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), m.env...)
	out := &tail{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	client := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err := client.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd, base, nil
			}
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, "", fmt.Errorf("no answer on %s/health within 30 s; its output ends:\n%s", base, lastLines(out.String(), 10))
}
