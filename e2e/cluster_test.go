package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// A cluster is several `nexus serve` nodes behind a real nginx configured
// by docs/nginx (docs/deploy.md, "Scale-out behind nginx"): nexus.conf
// verbatim, nexus-nodes.conf with only its addresses replaced by the
// nodes' ports, as a user edits it.
type cluster struct {
	t     *testing.T
	opts  clusterOptions
	dir   string
	base  string // nginx: http://127.0.0.1:PORT
	nodes []*clusterNode
	nginx *exec.Cmd
	done  chan struct{}
}

// clusterOptions say what every node serves and how it starts.
type clusterOptions struct {
	// Program is the TARGET every node serves.
	Program string
	// Env is added to every node's environment (a shared NEXUS_STATE_KEY,
	// say, so that any node accepts state another one signed).
	Env []string
	// Args are more `nexus serve` flags for every node.
	Args []string
}

// clusterNode is one node: its id (as in docs/nginx/nexus-nodes.conf), its
// port, which stays across restarts, and its current process.
type clusterNode struct {
	id   string
	port int
	srv  *httpServer
}

// docsNodes are the node ids and addresses docs/nginx/nexus-nodes.conf names.
var docsNodes = []struct{ id, addr string }{{"n1", "10.0.0.1:9000"}, {"n2", "10.0.0.2:9000"}, {"n3", "10.0.0.3:9000"}}

// nginxBinary finds nginx, which Debian installs in /usr/sbin (not in a
// normal user's PATH).
func nginxBinary() (string, string) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, ""
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx", ""
	}
	return "", "nginx is not installed (run make deps)"
}

// startCluster starts len(docsNodes) nodes, then nginx in front of them,
// and waits until nginx answers /health.
func startCluster(t *testing.T, opts clusterOptions) *cluster {
	t.Helper()
	bin, why := nginxBinary()
	if why != "" {
		testenv.MissingTool(t, why)
	}
	c := &cluster{t: t, opts: opts, dir: t.TempDir(), done: make(chan struct{})}
	// nginx's workers run as nobody when the test runs as root; they need
	// to reach their temp directories.
	if err := os.Chmod(c.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range docsNodes {
		node := &clusterNode{id: n.id}
		c.nodes = append(c.nodes, node)
		c.startNode(node)
	}
	c.startNginx(bin)
	return c
}

// startNode starts the node's process: on a free port the first time, on
// the same port after that.
func (c *cluster) startNode(n *clusterNode) {
	c.t.Helper()
	args := append([]string{"serve", "--port", strconv.Itoa(n.port), "--node-id", n.id}, c.opts.Args...)
	n.srv = startHTTP(c.t, c.opts.Env, append(args, c.opts.Program)...)
	if n.port == 0 {
		_, port, err := net.SplitHostPort(strings.TrimPrefix(n.srv.base, "http://"))
		if err != nil {
			c.t.Fatal(err)
		}
		n.port, _ = strconv.Atoi(port)
	}
}

// restart starts a new process for a node whose process has exited.
func (c *cluster) restart(n *clusterNode) {
	c.t.Helper()
	select {
	case <-n.srv.done:
	default:
		c.t.Fatalf("node %s: restart while its process still runs", n.id)
	}
	c.startNode(n)
}

// terminate sends SIGTERM (a drain) and waits for the process to exit.
func (n *clusterNode) terminate(t *testing.T) {
	t.Helper()
	n.srv.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.srv.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("node %s did not exit within 30s of SIGTERM:\n%s", n.id, n.srv.stderr.String())
	}
	if n.srv.exit != nil {
		t.Errorf("node %s exited with %v after SIGTERM:\n%s", n.id, n.srv.exit, n.srv.stderr.String())
	}
}

// kill sends SIGKILL and waits until the process is reaped: its sockets are
// closed by then.
func (n *clusterNode) kill(t *testing.T) {
	t.Helper()
	n.srv.cmd.Process.Kill()
	<-n.srv.done
}

// metrics scrapes the node's /metrics directly, not through nginx.
func (n *clusterNode) metrics(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(n.srv.base + "/metrics")
	if err != nil {
		t.Fatalf("node %s: GET /metrics: %v", n.id, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("node %s: GET /metrics: %d %v", n.id, resp.StatusCode, err)
	}
	return string(b)
}

var callsTotalRE = regexp.MustCompile(`(?m)^nexus_calls_total\{([^}]*)\} (\S+)$`)

// callsTotal sums nexus_calls_total over every series of a /metrics page,
// and over those whose outcome is ok.
func callsTotal(page string) (all, ok float64) {
	for _, m := range callsTotalRE.FindAllStringSubmatch(page, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		all += v
		if strings.Contains(m[1], `outcome="ok"`) {
			ok += v
		}
	}
	return all, ok
}

// nodesConf is docs/nginx/nexus-nodes.conf with each documented address
// replaced by a node's: the only edit the file asks of its user.
func (c *cluster) nodesConf() string {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "nginx", "nexus-nodes.conf"))
	if err != nil {
		c.t.Fatal(err)
	}
	conf := string(b)
	for i, n := range docsNodes {
		if !strings.Contains(conf, n.addr) || !strings.Contains(conf, `~^`+n.id+`\.`) {
			c.t.Fatalf("docs/nginx/nexus-nodes.conf no longer names node %s at %s", n.id, n.addr)
		}
		conf = strings.ReplaceAll(conf, n.addr, fmt.Sprintf("127.0.0.1:%d", c.nodes[i].port))
	}
	return conf
}

// startNginx writes the main configuration (what nginx needs to run
// unprivileged in c.dir: pid, logs, temp paths, and a listen port) around
// the docs' files, and starts nginx in the foreground.
func (c *cluster) startNginx(bin string) {
	c.t.Helper()
	nodes := filepath.Join(c.dir, "nexus-nodes.conf")
	if err := os.WriteFile(nodes, []byte(c.nodesConf()), 0o644); err != nil {
		c.t.Fatal(err)
	}
	port := freePort(c.t)
	top := fmt.Sprintf(`worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log notice;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[2]s;
    server {
        listen 127.0.0.1:%[3]d;
        include %[4]s;
    }
}
`, c.dir, nodes, port, filepath.Join(repoRoot, "docs", "nginx", "nexus.conf"))
	conf := filepath.Join(c.dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(top), 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.nginx = exec.Command(bin, "-p", c.dir, "-c", conf, "-e", filepath.Join(c.dir, "error.log"), "-g", "daemon off;")
	out := &syncBuffer{}
	c.nginx.Stdout, c.nginx.Stderr = out, out
	if err := c.nginx.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() { c.nginx.Wait(); close(c.done) }()
	c.t.Cleanup(func() {
		c.nginx.Process.Signal(syscall.SIGTERM) // fast shutdown: master and workers
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			c.nginx.Process.Kill()
			<-c.done
		}
		if c.t.Failed() {
			log, _ := os.ReadFile(filepath.Join(c.dir, "error.log"))
			c.t.Logf("nginx output:\n%s\nnginx error.log:\n%s", out.String(), log)
		}
	})
	c.base = fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(c.base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		select {
		case <-c.done:
			log, _ := os.ReadFile(filepath.Join(c.dir, "error.log"))
			c.t.Fatalf("nginx exited: %s\n%s", out.String(), log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("nginx does not answer /health: %v", err)
		}
	}
}

// freePort is a TCP port nothing listens on just now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// post sends an MCP message to nginx's /mcp and returns status, headers and body.
func (c *cluster) post(ctx context.Context, client *http.Client, body string, headers ...string) (int, http.Header, string, error) {
	resp, b, err := exchange(ctx, client, http.MethodPost, c.base+"/mcp", body, append([]string{"Accept", mcpAccept}, headers...)...)
	if resp == nil {
		return 0, nil, "", err
	}
	return resp.StatusCode, resp.Header, b, err
}
