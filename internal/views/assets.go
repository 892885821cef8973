package views

import (
	"bytes"
	_ "embed" // the views and the page
	"encoding/json"
)

// MimeType is an MCP Apps view's type (io.modelcontextprotocol/ui,
// 2026-01-26).
const MimeType = "text/html;profile=mcp-app"

// The assets scripts/build-views.sh writes: the view, every script and
// style inlined (uPlot among them), and the browser page.
var (
	//go:embed assets/view.html
	viewHTML []byte
	//go:embed assets/page.html
	pageHTML []byte
)

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
func Page() []byte { return pageHTML }
