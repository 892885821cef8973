package views

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

var anyURL = regexp.MustCompile(`(?i)https?://`)

// Every view is one HTML document of at most 300 KB that names no URL:
// hosts run it under a CSP without connections or outside scripts.
func TestViewsAreSelfContained(t *testing.T) {
	for _, k := range Kinds {
		v := View{Kind: k, Wrapped: true, Type: "[Real]", Columns: []string{"a</script><script>x", "b"}}
		doc := v.HTML(`title "with" <tags> & more`)
		if len(doc) > 300*1024 {
			t.Errorf("%s: %d bytes, over 300 KB", k, len(doc))
		}
		if m := anyURL.Find(doc); m != nil {
			t.Errorf("%s: holds a URL at %d", k, bytes.Index(doc, m))
		}
		if !bytes.HasPrefix(doc, []byte("<!DOCTYPE html>")) {
			t.Errorf("%s: not an HTML5 document", k)
		}
		got := settingsOf(t, doc)
		if got.Kind != k || got.Title != `title "with" <tags> & more` || got.Max != MaxItems || got.Columns[0] != "a</script><script>x" {
			t.Errorf("%s: settings read back as %+v", k, got)
		}
	}
	if m := anyURL.Find(Page()); m != nil {
		t.Errorf("the page holds a URL: %s", m)
	}
}

// settingsOf reads a view's settings back as the view does: the text of
// its #nexus-view element, which must be the only one and hold no "<".
func settingsOf(t *testing.T, doc []byte) settings {
	t.Helper()
	const open = `<script type="application/json" id="nexus-view">`
	if bytes.Count(doc, []byte(open)) != 1 {
		t.Fatalf("%d settings elements", bytes.Count(doc, []byte(open)))
	}
	body := doc[bytes.Index(doc, []byte(open))+len(open):]
	body = body[:bytes.Index(body, []byte("</script>"))]
	if bytes.ContainsRune(body, '<') {
		t.Fatalf("settings hold '<': %s", body)
	}
	var s settings
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("settings %s: %v", body, err)
	}
	return s
}

// Every view carries uPlot's licence, as MIT asks of each copy, and names
// the version vendored; fill refuses a marker that is missing, doubled, or a
// text that would end its element.
func TestAssemble(t *testing.T) {
	version, err := os.ReadFile("vendor/uplot/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"uPlot " + strings.TrimSpace(string(version)) + ", under the MIT License", "Permission is hereby granted"} {
		if view, _ := assembled(); !bytes.Contains(view, []byte(want)) {
			t.Errorf("the view lacks %q", want)
		}
	}
	for _, c := range []struct {
		name, template string
		parts          map[string]string
		err            string
	}{
		{"filled", "a/*X_JS*/b", map[string]string{"/*X_JS*/": "1+1"}, ""},
		{"missing marker", "ab", map[string]string{"/*X_JS*/": "1"}, "must appear once"},
		{"doubled marker", "/*X_JS*//*X_JS*/", map[string]string{"/*X_JS*/": "1"}, "must appear once"},
		{"script closer", "/*X_JS*/", map[string]string{"/*X_JS*/": "x</SCRIPT>"}, "holds </script"},
		{"style closer", "/*X_CSS*/", map[string]string{"/*X_CSS*/": "</style>"}, "holds </style"},
		{"comment closer", "<!--N-->", map[string]string{"<!--N-->": "<!--a--b-->"}, "end its comment early"},
	} {
		out, err := fill(c.template, c.parts)
		switch {
		case c.err == "" && (err != nil || string(out) != "a1+1b"):
			t.Errorf("%s: %q, %v", c.name, out, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: err %v, want %q", c.name, err, c.err)
		}
	}
}
