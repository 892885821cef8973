// Package views owns how nexus shows a result to a person (docs/views.md):
// which view fits a command's result, chosen from its declared return type
// or named by its metadata.view (views.go), and the self-contained HTML of
// every view and of the browser page (assets.go), put together from src/
// and the vendored uPlot, embedded here so that `go build` needs no npm.
// It knows nothing
// of MCP: package mcp serves a view as an MCP Apps ui:// resource, package
// httpserve serves the page.
package views

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// Kind names a view.
type Kind string

// The views, each drawn from one shape of value.
const (
	Chart   Kind = "chart"   // a list of numbers: a line chart, or a histogram
	Table   Kind = "table"   // a list of records, tuples or scalars: a sortable table
	Heatmap Kind = "heatmap" // a list of lists of numbers: one cell per number
	Record  Kind = "record"  // a record: keys and values, nested ones expandable
	Text    Kind = "text"    // a string
	Image   Kind = "image"   // the image a command answers with (a PNG, an SVG)
	JSON    Kind = "json"    // anything: a collapsible JSON tree
)

// Kinds lists every view.
var Kinds = []Kind{Chart, Table, Heatmap, Record, Text, Image, JSON}

// MaxItems is the most points, rows or cells a view draws; past it, a view
// draws the first MaxItems and says how many there are.
const MaxItems = 10000

// View is how one command's result is shown.
type View struct {
	Kind Kind `json:"kind"`
	// Wrapped says the value reaches the view as {"result": value}: MCP's
	// structuredContent is an object, so only a record travels as itself.
	Wrapped bool `json:"wrapped"`
	// Columns are a table's columns in their declared order: a record's
	// fields, a tuple's places (1, 2, ...), "key" and "value" for a map;
	// nil for rows of scalars.
	Columns []string `json:"columns,omitempty"`
	// Type is the declared type as morloc writes it ("[Real]").
	Type string `json:"type"`
}

// For returns the view of a command's result, and false when it has none:
// its metadata.view when given (false: none; a view's name), else the one
// its declared type calls for. A command returning nothing, or a file or
// bytes that are no image or text, has none. The error says why a
// metadata.view cannot be used.
func For(cmd *manifest.Command) (View, bool, error) {
	v := View{Wrapped: !cmd.Return.T.IsRecord(), Type: cmd.Return.TypeName}
	if v.Type == "" {
		v.Type = cmd.Return.Schema
	}
	fits := fitting(cmd)
	if raw, ok := cmd.Metadata["view"]; ok && string(raw) != "null" {
		named, on, err := parseView(raw)
		if err != nil || !on {
			return View{}, false, err
		}
		if named != "" {
			if !slices.Contains(fits, named) {
				return View{}, false, fmt.Errorf("view %q does not fit %s's result, %s: it %s (views that fit: %s)",
					named, cmd.Name, v.Type, shows[named], listKinds(fits))
			}
			v.Kind = named
		}
	}
	if v.Kind == "" {
		if len(fits) == 0 {
			return View{}, false, nil
		}
		v.Kind = fits[0]
	}
	if v.Kind == Table {
		v.Columns = columns(cmd.Return.T)
	}
	return v, true, nil
}

// shows says what each view draws, for an error naming one that does not fit.
var shows = map[Kind]string{
	Chart:   "draws a list of numbers",
	Table:   "draws a list, one row an element",
	Heatmap: "draws a list of lists of numbers",
	Record:  "draws a record",
	Text:    "draws a string",
	Image:   "draws the image a command answers with (metadata.result \"file\" or a return mime of image/*)",
	JSON:    "draws any value",
}

// parseView reads metadata.view: true (the view the type calls for),
// false (none), or a view's name.
func parseView(raw json.RawMessage) (named Kind, on bool, err error) {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return "", b, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && slices.Contains(Kinds, Kind(s)) {
		return Kind(s), true, nil
	}
	return "", false, errors.New("expected false (no view), true, or one of " + listKinds(Kinds) + ", got " + string(raw))
}

func listKinds(ks []Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// fitting lists the views that can draw a command's result, the one its
// type calls for first; none for a result with nothing to draw.
func fitting(cmd *manifest.Command) []Kind {
	r := &cmd.Return
	if cmd.FileResult != nil {
		if strings.HasPrefix(cmd.FileResult.MimeType, "image/") {
			return []Kind{Image}
		}
		return nil // a link to a file: the host shows it as it shows links
	}
	if r.Mime != "" {
		switch {
		case strings.HasPrefix(r.Mime, "image/"):
			return []Kind{Image}
		case strings.HasPrefix(r.Mime, "text/"):
			return []Kind{Text}
		}
		return nil
	}
	t := bare(r.T)
	if t == nil || t.Kind == manifest.Nil {
		return nil
	}
	switch {
	case t.Kind == manifest.Str:
		return []Kind{Text, JSON}
	case t.Kind == manifest.Record:
		return []Kind{Record, JSON, Text}
	case t.Kind != manifest.List:
		return []Kind{JSON, Text}
	}
	e := bare(t.Elem)
	switch {
	case numeric(e):
		return []Kind{Chart, Table, JSON, Text}
	case e != nil && e.Kind == manifest.List && numeric(bare(e.Elem)):
		return []Kind{Heatmap, Table, JSON, Text}
	case e != nil && (e.Kind == manifest.Record || e.Kind == manifest.Tuple || scalar(e)):
		return []Kind{Table, JSON, Text}
	}
	return []Kind{JSON, Table, Text} // a table of any list, when asked for
}

// bare is t without recursive declarations and optional wrappers: a view
// draws a missing value as missing, whatever holds it.
func bare(t *manifest.Type) *manifest.Type {
	for {
		t = t.Unwrap()
		if t == nil || t.Kind != manifest.Optional {
			return t
		}
		t = t.Elem
	}
}

func numeric(t *manifest.Type) bool {
	return t != nil && (t.Kind == manifest.Int || t.Kind == manifest.Float)
}

func scalar(t *manifest.Type) bool {
	return numeric(t) || t != nil && (t.Kind == manifest.Str || t.Kind == manifest.Bool)
}

// columns names a table's columns, from the declared type of its rows.
func columns(t *manifest.Type) []string {
	t = bare(t)
	if t == nil || t.Kind != manifest.List {
		return nil
	}
	e := bare(t.Elem)
	switch {
	case e == nil:
		return nil
	case t.IsMap():
		return []string{"key", "value"}
	case e.Kind == manifest.Record:
		cols := make([]string, len(e.Fields))
		for i, f := range e.Fields {
			cols[i] = f.Key
		}
		return cols
	case e.Kind == manifest.Tuple:
		cols := make([]string, len(e.Items))
		for i := range e.Items {
			cols[i] = fmt.Sprint(i + 1)
		}
		return cols
	}
	return nil
}
