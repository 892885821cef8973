package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// MCP Apps views (docs/views.md) and the browser page, end to end: the
// real nexus serving testdata/views (Python) and testdata/plots (Python,
// R, C++), clients with and without the extension, and headless Chromium
// driven by e2e/views/host.mjs (ext-apps' AppBridge) and page.mjs.

var updateViewShots = flag.Bool("update-view-shots", false, "copy the view tests' screenshots into docs/img")

const appsInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}},"clientInfo":{"name":"e2e-apps","version":"0"}}}`

// viewsOnStdio lists the tools of `nexus mcp testdata/views extra...` for a
// client that sends init, and returns the raw tools/list result.
func viewsOnStdio(t *testing.T, init string, extra ...string) (string, string) {
	t.Helper()
	s := startServer(t, program("views"), extra...)
	s.send(init)
	initReply := s.recvRaw()
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	return initReply, s.recvRaw()
}

var uiMetaRE = regexp.MustCompile(`,"_meta":\{"ui":\{"resourceUri":"ui://views/[A-Za-z]+"\}\}`)

// A client that does not declare the extension gets the tool list a
// server with views off gives, byte for byte, on stdio and over HTTP;
// one that declares it gets the same list with _meta.ui on each tool
// that has a view.
func TestViewsOnlyForTheExtension(t *testing.T) {
	testenv.NeedPython(t)
	plainInit := strings.Replace(appsInit, `"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`, ``, 1)
	initOn, plain := viewsOnStdio(t, plainInit)
	initOff, off := viewsOnStdio(t, plainInit, "--views=false")
	if plain != off || initOn != initOff {
		t.Errorf("a client without the extension sees a change:\n%s\n%s\nwith --views=false:\n%s\n%s", initOn, plain, initOff, off)
	}
	if strings.Contains(plain, "_meta") || strings.Contains(plain, "ui://") {
		t.Errorf("a client without the extension sees views: %s", plain)
	}
	initApps, apps := viewsOnStdio(t, appsInit)
	if !strings.Contains(initApps, `"io.modelcontextprotocol/ui":{}`) {
		t.Errorf("initialize does not declare the extension: %s", initApps)
	}
	if n := len(uiMetaRE.FindAllString(apps, -1)); n != 10 {
		t.Errorf("%d tools name a view, want 10 (every one but version): %s", n, apps)
	}
	if uiMetaRE.ReplaceAllString(apps, "") != plain {
		t.Errorf("without its _meta members the list differs:\n%s\n%s", apps, plain)
	}
	_, offApps := viewsOnStdio(t, appsInit, "--views=false")
	if offApps != off {
		t.Errorf("--views=false still shows views: %s", offApps)
	}

	srv := startHTTP(t, nil, "serve", "--port", "0", program("views"))
	sid := srv.session()
	_, body := srv.rpc(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25")
	if !strings.Contains(body, `"tools":[`) || strings.Contains(body, "_meta") {
		t.Errorf("over HTTP, a client without the extension: %s", body)
	}
}

// Every view is readable as text/html;profile=mcp-app, at most 300 KB,
// with no http(s) URL in it.
func TestViewsAreReadable(t *testing.T) {
	testenv.NeedPython(t)
	srv := startHTTP(t, nil, "serve", "--port", "0", program("views"))
	resp, body := srv.rpc(appsInit)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	hdr := []string{"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"}
	srv.rpc(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...)
	_, list := srv.rpc(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, hdr...)
	uris := regexp.MustCompile(`"resourceUri":"(ui://[^"]+)"`).FindAllStringSubmatch(list, -1)
	if len(uris) != 10 {
		t.Fatalf("%d views: %s", len(uris), list)
	}
	_, resources := srv.rpc(`{"jsonrpc":"2.0","id":2,"method":"resources/list"}`, hdr...)
	for i, m := range uris {
		uri := m[1]
		if !strings.Contains(resources, `"uri":"`+uri+`"`) {
			t.Errorf("resources/list lacks %s", uri)
		}
		_, body := srv.rpc(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":%q}}`, 10+i, uri), hdr...)
		var r struct {
			Result struct {
				Contents []struct{ URI, MimeType, Text string }
			}
		}
		if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Result.Contents) != 1 {
			t.Fatalf("%s: %v %.300s", uri, err, body)
		}
		c := r.Result.Contents[0]
		if c.URI != uri || c.MimeType != "text/html;profile=mcp-app" || !strings.HasPrefix(c.Text, "<!DOCTYPE html>") {
			t.Errorf("%s: %s %s %.40q", uri, c.URI, c.MimeType, c.Text)
		}
		if len(c.Text) > 300*1024 {
			t.Errorf("%s: %d bytes, over 300 KB", uri, len(c.Text))
		}
		if u := regexp.MustCompile(`(?i)https?://\S{0,40}`).FindString(c.Text); u != "" {
			t.Errorf("%s holds a URL: %s", uri, u)
		}
	}
}

// GET / is the page, behind the server's token: the browser's Basic
// challenge, the token as password.
func TestPageIsServed(t *testing.T) {
	testenv.NeedPython(t)
	srv := startHTTP(t, []string{"NEXUS_AUTH_TOKEN=e2e-page-token"}, "serve", "--port", "0", program("views"))
	get := func(auth string) *http.Response {
		req, _ := http.NewRequest("GET", srv.base+"/", nil)
		if auth != "" {
			req.SetBasicAuth("me", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := get(""); resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("GET / without the token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if resp := get("e2e-page-token"); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("GET / with the token: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// requireBrowser stops a test without node, Chromium or e2e/views's npm
// packages (scripts/install-deps.sh installs them).
func requireBrowser(t *testing.T) string {
	t.Helper()
	testenv.Long(t) // Chromium takes seconds to start
	testenv.NeedPython(t)
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.MissingTool(t, "node is not installed: the view tests cannot drive Chromium")
	}
	chromium := os.Getenv("NEXUS_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		testenv.MissingTool(t, "Chromium is not installed at "+chromium+" (Debian: apt-get install chromium; or set NEXUS_CHROMIUM)")
	}
	dir := filepath.Join(repoRoot, "e2e", "views")
	for _, p := range []string{"puppeteer-core", "@modelcontextprotocol/ext-apps", "esbuild"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			testenv.MissingTool(t, p+" is not installed in e2e/views: run scripts/install-deps.sh")
		}
	}
	return node
}

// artefacts is where the view tests keep their screenshots: they stay
// after the run, for a person to look at.
func artefacts(t *testing.T) string {
	dir := filepath.Join(repoRoot, "e2e", "views", "artefacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runNode runs one of e2e/views's scripts and decodes what it prints.
func runNode(t *testing.T, node string, out any, args ...string) {
	t.Helper()
	cmd := exec.Command(node, args...)
	cmd.Dir = filepath.Join(repoRoot, "e2e", "views")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s\n%s", args[0], err, stdout.String(), stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("node %s printed %v: %s\n%s", args[0], err, stdout.String(), stderr.String())
	}
	t.Logf("%s: screenshots in %s", args[0], artefacts(t))
}

// drawn is what a view drew (e2e/views/browser.mjs, observe).
type drawn struct {
	State        string   `json:"state"`
	Caption      string   `json:"caption"`
	ChartPoints  *string  `json:"chartPoints"`
	ChartMode    *string  `json:"chartMode"`
	TableRows    *int     `json:"tableRows"`
	TableColumns []string `json:"tableColumns"`
	HeatmapCells *int     `json:"heatmapCells"`
	RecordFields *int     `json:"recordFields"`
	Record       *string  `json:"record"`
	Tree         *string  `json:"tree"`
	Text         *string  `json:"text"`
	Images       []struct {
		Loaded bool `json:"loaded"`
		Width  int  `json:"width"`
	} `json:"images"`
	Error      *string `json:"error"`
	Theme      string  `json:"theme"`
	Background string  `json:"background"`
}

// what says what a view drew, for a failure message.
func (d *drawn) what() string {
	b, _ := json.Marshal(d)
	return string(b)
}

func str(p *string) string {
	if p == nil {
		return "<none>"
	}
	return *p
}

func num(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

type hostCase struct {
	Tool      string         `json:"tool"`
	Name      string         `json:"name,omitempty"`
	Args      map[string]any `json:"args"`
	Histogram bool           `json:"histogram,omitempty"`
	Table     string         `json:"table,omitempty"` // a column to sort by; then Copy as CSV
	Images    bool           `json:"images,omitempty"`
}

type hostRun struct {
	Tools map[string]*string `json:"tools"`
	Cases []struct {
		Name        string  `json:"name"`
		ResourceURI *string `json:"resourceUri"`
		MimeType    string  `json:"mimeType"`
		Bytes       int     `json:"bytes"`
		HasURL      bool    `json:"hasURL"`
		IsError     bool    `json:"isError"`
		Structured  bool    `json:"structured"`
		Drawn       *drawn  `json:"drawn"`
		Histogram   *drawn  `json:"histogram"`
		Dark        *drawn  `json:"dark"`
		Sizes       []struct {
			Width, Height float64
		} `json:"sizes"`
		FrameHeight float64  `json:"frameHeight"`
		Ascending   []string `json:"ascending"`
		Descending  []string `json:"descending"`
		Copied      *struct {
			Status string  `json:"status"`
			CSV    *string `json:"csv"`
		} `json:"copied"`
		Teardown string `json:"teardown"`
		Fault    string `json:"fault"`
	} `json:"cases"`
	browserWatch
}

// browserWatch is what e2e/views/browser.mjs's print adds to a script's
// report: requests that left nexus's origin, console messages, page errors.
type browserWatch struct {
	Outside []string `json:"outside"`
	Console []string `json:"console"`
	Errors  []string `json:"errors"`
}

// check fails t when the browser went outside, logged or threw.
func (w browserWatch) check(t *testing.T, who string) {
	t.Helper()
	if len(w.Outside) > 0 || len(w.Errors) > 0 || len(w.Console) > 0 {
		t.Errorf("%s asked for %q; page errors %q; console %q", who, w.Outside, w.Errors, w.Console)
	}
}

// hostViews runs host.mjs against url with cases.
func hostViews(t *testing.T, node, url string, cases []hostCase) *hostRun {
	t.Helper()
	js, _ := json.Marshal(cases)
	var run hostRun
	runNode(t, node, &run, "host.mjs", url, artefacts(t), string(js))
	if len(run.Cases) != len(cases) {
		t.Fatalf("%d cases run, want %d", len(run.Cases), len(cases))
	}
	run.check(t, "the views")
	return &run
}

// In headless Chromium, through ext-apps' AppBridge, every view draws a
// real result from nexus: 1,000 points, 50 rows, 600 cells, a record, a
// string, images (an SVG answered inline, a PNG the function wrote, read
// back through the bridge), a JSON tree, the tool's error; it sends its
// size, follows the host's theme, and makes no network request.
func TestViewsInChromium(t *testing.T) {
	node := requireBrowser(t)
	srv := startHTTP(t, nil, "serve", "--port", "0", program("views"))
	run := hostViews(t, node, srv.url, []hostCase{
		{Tool: "series", Args: map[string]any{"n": 1000}, Histogram: true},
		{Tool: "measurements", Args: map[string]any{"n": 50}, Table: "value"},
		{Tool: "grid", Args: map[string]any{"rows": 20, "cols": 30}},
		{Tool: "summary", Args: map[string]any{"values": []float64{1, 2, 3, 4, 10}}},
		{Tool: "describe", Args: map[string]any{"name": "control"}},
		{Tool: "sparkline", Args: map[string]any{"values": []float64{1, 3, 2, 5, 4}}, Images: true},
		{Tool: "wordCounts", Args: map[string]any{"text": "the cat and the hat"}},
		{Tool: "lookup", Args: map[string]any{"name": "treated"}},
		{Tool: "rawSeries", Args: map[string]any{"n": 5}},
		{Tool: "fail", Args: map[string]any{"message": "no such sample"}},
		{Tool: "series", Name: "series-large", Args: map[string]any{"n": 25000}},
		{Tool: "version", Args: map[string]any{}},
	})
	if v, ok := run.Tools["version"]; !ok || v != nil {
		t.Errorf("version, whose metadata turns its view off, names %v", str(v))
	}
	for _, c := range run.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Fault != "" {
				t.Fatalf("host.mjs: %s", c.Fault)
			}
			if c.Name == "version" {
				if c.ResourceURI != nil {
					t.Errorf("version has a view: %s", *c.ResourceURI)
				}
				return
			}
			d := c.Drawn
			if c.MimeType != "text/html;profile=mcp-app" || c.Bytes > 300*1024 || c.HasURL || d == nil {
				t.Fatalf("view %s: %s, %d bytes, URL %v, drawn %v", str(c.ResourceURI), c.MimeType, c.Bytes, c.HasURL, d)
			}
			if want := map[bool]string{true: "error", false: "shown"}[c.Name == "fail"]; d.State != want {
				t.Errorf("state %q, want %q: %s", d.State, want, d.what())
			}
			switch c.Name {
			case "series":
				if str(d.ChartPoints) != "1000" || str(d.ChartMode) != "line" || c.Histogram == nil || str(c.Histogram.ChartMode) != "histogram" || str(c.Histogram.ChartPoints) != "1000" {
					t.Errorf("a [Real] of 1,000 drew %s points; as a histogram %v", str(d.ChartPoints), c.Histogram)
				}
			case "series-large":
				if str(d.ChartPoints) != "10000" || !strings.Contains(d.Caption, "showing the first 10,000 of 25,000") {
					t.Errorf("a [Real] of 25,000 drew %s points, caption %q", str(d.ChartPoints), d.Caption)
				}
			case "measurements":
				if num(d.TableRows) != 50 || !slices.Equal(d.TableColumns, []string{"sample", "group", "value", "passed"}) {
					t.Errorf("50 records drew %d rows, columns %q", num(d.TableRows), d.TableColumns)
				}
				checkSorted(t, c.Ascending, c.Descending, 50)
				if c.Copied == nil || c.Copied.CSV == nil && c.Copied.Status != "Copied 50 rows." {
					t.Errorf("Copy as CSV: %+v", c.Copied)
				} else if c.Copied.CSV != nil {
					// A textarea's value holds \n where the CSV has \r\n.
					lines := strings.Split(strings.TrimSuffix(strings.ReplaceAll(*c.Copied.CSV, "\r\n", "\n"), "\n"), "\n")
					if len(lines) != 51 || lines[0] != "sample,group,value,passed" || !strings.HasPrefix(lines[1], "s001,control,") {
						t.Errorf("the CSV has %d lines: %q...", len(lines), lines[:min(3, len(lines))])
					}
				}
			case "grid":
				if num(d.HeatmapCells) != 600 || !strings.Contains(d.Caption, "20 × 30") {
					t.Errorf("a 20×30 matrix drew %d cells, caption %q", num(d.HeatmapCells), d.Caption)
				}
			case "summary":
				if num(d.RecordFields) != 4 || !strings.Contains(str(d.Record), "max: 10") || !strings.Contains(str(d.Record), "quartiles") {
					t.Errorf("the record drew %d fields: %s", num(d.RecordFields), d.what())
				}
			case "describe":
				if !strings.HasPrefix(str(d.Text), "Sample control\nCollected") {
					t.Errorf("the string drew %q", str(d.Text))
				}
			case "sparkline":
				if len(d.Images) != 1 || !d.Images[0].Loaded || d.Images[0].Width != 240 {
					t.Errorf("the SVG drew %+v", d.Images)
				}
			case "wordCounts":
				if num(d.TableRows) != 4 || !slices.Equal(d.TableColumns, []string{"key", "value"}) {
					t.Errorf("the map drew %d rows, columns %q", num(d.TableRows), d.TableColumns)
				}
			case "lookup":
				if str(d.Tree) != "2" {
					t.Errorf("the ?Int drew %q", str(d.Tree))
				}
			case "rawSeries":
				if !strings.HasPrefix(str(d.Tree), "[5 items]") || d.ChartPoints != nil {
					t.Errorf("metadata.view json drew %s", d.what())
				}
			case "fail":
				if str(d.Error) != "ValueError: no such sample" || !c.IsError {
					t.Errorf("the error drew %q", str(d.Error))
				}
			}
			if len(c.Sizes) == 0 || c.Sizes[len(c.Sizes)-1].Height < 20 || c.FrameHeight < c.Sizes[len(c.Sizes)-1].Height {
				t.Errorf("sizes %v, frame %v", c.Sizes, c.FrameHeight)
			}
			if c.Dark == nil || c.Dark.Theme != "dark" || c.Dark.Background != "rgb(1, 2, 3)" {
				t.Errorf("after the host's theme changed: %v", c.Dark)
			}
			if c.Teardown != "ok" {
				t.Errorf("ui/resource-teardown: %s", c.Teardown)
			}
			if c.Name != "fail" && c.Name != "sparkline" && !c.Structured {
				t.Errorf("the result had no structuredContent")
			}
		})
	}

	// A file the function wrote (R's PNG) is a resource link: the view
	// reads it through the host, which asks nexus.
	plots := startHTTP(t, nil, "serve", "--port", "0", program("plots"))
	run = hostViews(t, node, plots.url, []hostCase{
		{Tool: "plot_values", Name: "plot", Args: map[string]any{"values": []float64{3, 1, 4, 1, 5, 9, 2, 6}, "title": "e2e plot"}, Images: true},
	})
	if c := run.Cases[0]; c.Fault != "" || c.Drawn == nil || len(c.Drawn.Images) != 1 || !c.Drawn.Images[0].Loaded || c.Drawn.Images[0].Width < 100 {
		t.Errorf("the written PNG: %s %v", c.Fault, c.Drawn)
	}
	copyViewShots(t, map[string]string{
		"host-series.png": "view-chart.png", "host-series-histogram.png": "view-histogram.png",
		"host-measurements.png": "view-table.png", "host-grid.png": "view-heatmap.png",
		"host-summary.png": "view-record.png", "host-describe.png": "view-text.png",
		"host-plot.png": "view-image.png", "host-rawSeries.png": "view-json.png",
	})
}

// checkSorted checks a column read after sorting it up, then down.
func checkSorted(t *testing.T, up, down []string, n int) {
	t.Helper()
	nums := func(col []string) []float64 {
		var out []float64
		for _, s := range col {
			var f float64
			if _, err := fmt.Sscan(s, &f); err != nil {
				t.Errorf("%q is no number", s)
			}
			out = append(out, f)
		}
		return out
	}
	a, d := nums(up), nums(down)
	if len(a) != n || len(d) != n || !slices.IsSorted(a) || a[0] == a[n-1] {
		t.Errorf("sorted up: %v", a)
	}
	slices.Reverse(d)
	if !slices.Equal(a, d) {
		t.Errorf("sorted down is not sorted up reversed: %v", down)
	}
}

// pageRun is what page.mjs prints.
type pageRun struct {
	Status      int                 `json:"status"`
	Program     string              `json:"program"`
	Failed      *string             `json:"failed"`
	Forms       map[string][]string `json:"forms"`
	Series      *pageResult         `json:"series"`
	Measurement *pageResult         `json:"measurements"`
	Grid        *pageResult         `json:"grid"`
	Summary     *pageResult         `json:"summary"`
	Fail        *pageResult         `json:"fail"`
	Invalid     *pageResult         `json:"invalid"`
	NotWhole    *pageResult         `json:"notWhole"`
	Infinite    *pageResult         `json:"infinite"`
	Themed      struct{ Page, View string }
	// catalog mode
	Resources    []string `json:"resources"`
	Readme       string   `json:"readme"`
	FigureWidth  int      `json:"figureWidth"`
	Template     string   `json:"template"`
	Prompts      []string `json:"prompts"`
	PromptFields []string `json:"promptFields"`
	Messages     []string `json:"messages"`
	PromptError  *string  `json:"promptError"`

	Fault string `json:"fault"`
	browserWatch
}

type pageResult struct {
	Drawn       *drawn   `json:"drawn"`
	Error       *string  `json:"error"`
	Invalid     []string `json:"invalid"`
	FrameHeight float64  `json:"frameHeight"`
}

func (r *pageResult) String() string {
	if r == nil {
		return "nothing"
	}
	if r.Drawn != nil {
		return r.Drawn.what()
	}
	return fmt.Sprintf("error %q, invalid %q", str(r.Error), r.Invalid)
}

func runPage(t *testing.T, node, base, mode, token string) *pageRun {
	t.Helper()
	var run pageRun
	args := []string{"page.mjs", base, artefacts(t), mode}
	if token != "" {
		args = append(args, token)
	}
	runNode(t, node, &run, args...)
	if run.Fault != "" {
		t.Fatalf("page.mjs: %s", run.Fault)
	}
	if run.Status != 200 || run.Failed != nil {
		t.Fatalf("the page: %d %s", run.Status, str(run.Failed))
	}
	run.check(t, "the page")
	return &run
}

// GET / on nexus serve, in headless Chromium, behind a token: a form for
// every tool, generated from its inputSchema; Run calls the tool and its
// view draws the result; an error is the tool's own message; a form left
// wrong says so without a call; the theme reaches the view; resources and
// prompts can be browsed.
func TestBrowserPage(t *testing.T) {
	node := requireBrowser(t)
	const token = "e2e-page-token"
	srv := startHTTP(t, []string{"NEXUS_AUTH_TOKEN=" + token}, "serve", "--port", "0", program("views"))
	run := runPage(t, node, srv.base, "tools", token)
	want := map[string][]string{
		"series": {"n", "period"}, "measurements": {"n"}, "grid": {"rows", "cols"}, "summary": {"values"},
		"describe": {"name"}, "sparkline": {"values"}, "wordCounts": {"text"}, "lookup": {"name"},
		"fail": {"message"}, "version": {}, "rawSeries": {"n"},
	}
	if fmt.Sprint(run.Forms) != fmt.Sprint(want) {
		t.Errorf("forms %v, want %v", run.Forms, want)
	}
	if r := run.Series; r == nil || r.Drawn == nil || str(r.Drawn.ChartPoints) != "150" || r.FrameHeight < 200 {
		t.Errorf("series with n=150: %s", r)
	}
	if r := run.Measurement; r == nil || r.Drawn == nil || num(r.Drawn.TableRows) != 50 {
		t.Errorf("measurements with n=50: %s", r)
	}
	if r := run.Grid; r == nil || r.Drawn == nil || num(r.Drawn.HeatmapCells) != 600 {
		t.Errorf("grid 20×30: %s", r)
	}
	if r := run.Summary; r == nil || r.Drawn == nil || num(r.Drawn.RecordFields) != 4 {
		t.Errorf("summary: %s", r)
	}
	if r := run.Fail; r == nil || str(r.Error) != "ValueError: the tool's own words" {
		t.Errorf("fail: %s", r)
	}
	if r := run.Invalid; r == nil || !slices.Equal(r.Invalid, []string{"n: a value is needed"}) {
		t.Errorf("series without n: %s", r)
	}
	if r := run.NotWhole; r == nil || len(r.Invalid) != 1 || !strings.Contains(r.Invalid[0], "expected a whole number") {
		t.Errorf("series with n=2.5: %s", r)
	}
	if r := run.Infinite; r == nil || r.Drawn == nil || str(r.Drawn.ChartPoints) != "5" {
		t.Errorf("series with n=5 and period Infinity: %s", r)
	}
	if run.Themed.Page != "dark" || run.Themed.View != "dark" {
		t.Errorf("after the theme switch: page %q, view %q", run.Themed.Page, run.Themed.View)
	}

	plots := startHTTP(t, nil, "serve", "--port", "0", program("plots"))
	cat := runPage(t, node, plots.base, "catalog", "")
	if !slices.Equal(cat.Resources, []string{"res:data://samples/README", "res:figures://example", "tpl:samples://{sample}", "tpl:stats://{sample}/summary", "tpl:binom://{n}/{k}"}) {
		t.Errorf("resources %q", cat.Resources)
	}
	if !strings.HasPrefix(cat.Readme, "# Samples") || cat.FigureWidth < 100 || !strings.HasPrefix(cat.Template, "[\n  10.78,") {
		t.Errorf("read %.40q, figure %d px wide, template %.40q", cat.Readme, cat.FigureWidth, cat.Template)
	}
	if !slices.Equal(cat.Prompts, []string{"prompt:plot_sample", "prompt:explain_figure"}) || !slices.Equal(cat.PromptFields, []string{"sample", "style"}) ||
		len(cat.Messages) < 2 || !strings.Contains(cat.Messages[0], "sample 'control'") || cat.PromptError != nil {
		t.Errorf("prompts %q, fields %q, messages %q, error %s", cat.Prompts, cat.PromptFields, cat.Messages, str(cat.PromptError))
	}
	copyViewShots(t, map[string]string{"page-grid.png": "page.png", "page-error.png": "page-error.png"})
}

// copyViewShots copies screenshots into docs/img under -update-view-shots;
// each must stay under 80 kB.
func copyViewShots(t *testing.T, names map[string]string) {
	t.Helper()
	if !*updateViewShots || t.Failed() {
		return
	}
	for from, to := range names {
		data, err := os.ReadFile(filepath.Join(artefacts(t), from))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) >= 80_000 {
			t.Errorf("%s is %d bytes, over 80 kB: not copied", from, len(data))
			continue
		}
		if err := os.WriteFile(filepath.Join(repoRoot, "docs", "img", to), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
