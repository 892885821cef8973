package views

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// MimeType is an MCP Apps view's type (io.modelcontextprotocol/ui,
// 2026-01-26).
const MimeType = "text/html;profile=mcp-app"

// The view's and the page's sources, and uPlot as scripts/vendor-uplot.sh
// vendors it. They are put together once, when first needed (not at
// start: a one-shot `nexus run` has no use for them): every script and style
// inlined, so that a view is one self-contained HTML file that makes no
// request (hosts run views under a CSP without connections or outside
// scripts), and `go build` needs no npm.
//
//go:embed src vendor/uplot
var sources embed.FS

var assembled = sync.OnceValues(assemble) // the view and the page

// assemble builds the view and the page from their sources. The sources are
// compiled in, so a fault here is a fault of the build: TestAssemble fails
// on it before any binary ships.
func assemble() (view, page []byte) {
	read := func(name string) string {
		b, err := sources.ReadFile(name)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	// uPlot's leading comment names its home page: a view holds no URL at
	// all, and the licence travels in the view's notice.
	uplotBanner := regexp.MustCompile(`^/\*![^*]*\*/\s*`)
	licence := strings.TrimSpace(read("vendor/uplot/LICENSE"))
	notice := "<!--\nnexus's view, put together from internal/views/src.\n\nIt includes uPlot " +
		strings.TrimSpace(read("vendor/uplot/VERSION")) + ", under the MIT License:\n\n" + licence + "\n-->"
	view, err := fill(read("src/view.html"), map[string]string{
		"<!--NOTICE-->": notice,
		"/*UPLOT_CSS*/": read("vendor/uplot/uPlot.min.css"),
		"/*VIEW_CSS*/":  read("src/view.css"),
		"/*UPLOT_JS*/":  uplotBanner.ReplaceAllString(read("vendor/uplot/uPlot.iife.min.js"), ""),
		"/*VIEW_JS*/":   read("src/view.js"),
	})
	if err == nil && bytes.Count(view, settingsMarker) != 1 {
		err = fmt.Errorf("view.html must hold its settings' marker once")
	}
	if err != nil {
		panic("views: " + err.Error())
	}
	page, err = fill(read("src/page.html"), map[string]string{
		"/*PAGE_CSS*/": read("src/page.css"),
		"/*PAGE_JS*/":  read("src/page.js"),
	})
	if err != nil {
		panic("views: " + err.Error())
	}
	return view, page
}

// fill replaces each marker of template, which must appear exactly once,
// with its text; a text that would end its element early is refused.
func fill(template string, parts map[string]string) ([]byte, error) {
	out := template
	for marker, text := range parts {
		closer := ""
		switch {
		case strings.Contains(marker, "CSS"):
			closer = "</style"
		case strings.Contains(marker, "JS"):
			closer = "</script"
		case strings.HasPrefix(marker, "<!--"):
			if strings.Contains(text[4:len(text)-3], "--") {
				return nil, fmt.Errorf("%s: the text would end its comment early", marker)
			}
		}
		if closer != "" && strings.Contains(strings.ToLower(text), closer) {
			return nil, fmt.Errorf("%s holds %s", marker, closer)
		}
		if strings.Count(out, marker) != 1 {
			return nil, fmt.Errorf("marker %s must appear once", marker)
		}
		out = strings.Replace(out, marker, text, 1)
	}
	return []byte(out), nil
}

// settingsMarker is where the view's settings go: a view reads them from
// this element, as JSON.
var settingsMarker = []byte(`<script type="application/json" id="nexus-view">null</script>`)

// settings are what a view reads from its document.
type settings struct {
	View
	Title string `json:"title,omitempty"`
	Max   int    `json:"max"`
}

// HTML is the document of the view v for a tool titled title: one
// self-contained HTML file that makes no network request. The settings
// are JSON with <, > and & escaped, so no value can end their element.
func (v View) HTML(title string) []byte {
	cfg, err := json.Marshal(settings{View: v, Title: title, Max: MaxItems})
	if err != nil {
		panic(err) // strings and booleans only: cannot fail
	}
	viewHTML, _ := assembled()
	out := make([]byte, 0, len(viewHTML)+len(cfg))
	at := bytes.Index(viewHTML, settingsMarker)
	out = append(out, viewHTML[:at]...)
	out = append(out, `<script type="application/json" id="nexus-view">`...)
	out = append(out, cfg...)
	out = append(out, `</script>`...)
	return append(out, viewHTML[at+len(settingsMarker):]...)
}

// Page is the browser page nexus serve answers at /: a program's tools,
// resources and prompts, with a form for each tool and its result drawn by
// the tool's view. It reaches the server only through /mcp.
func Page() []byte {
	_, page := assembled()
	return page
}
