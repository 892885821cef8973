package views

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
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

// The committed assets are what scripts/build-views.sh makes of the
// sources and the vendored uPlot as they are now.
func TestAssetsAreBuiltFromTheirSources(t *testing.T) {
	raw, err := os.ReadFile("assets/VERSIONS.json")
	if err != nil {
		t.Fatal(err)
	}
	var versions struct {
		Vendored map[string]struct{ Version, Licence string }
		Inputs   map[string]string
	}
	if err := json.Unmarshal(raw, &versions); err != nil {
		t.Fatal(err)
	}
	sources, _ := filepath.Glob("src/*")
	vendored, _ := filepath.Glob("vendor/*/*")
	for _, f := range append(sources, vendored...) {
		if _, ok := versions.Inputs[filepath.ToSlash(f)]; !ok {
			t.Errorf("%s is not among the inputs of assets/VERSIONS.json: run scripts/build-views.sh", f)
		}
	}
	for f, want := range versions.Inputs {
		data, err := os.ReadFile(filepath.FromSlash(f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s changed since the assets were built: run scripts/build-views.sh", f)
		}
	}
	u := versions.Vendored["uPlot"]
	version, _ := os.ReadFile("vendor/uplot/VERSION")
	if u.Licence != "MIT" || u.Version != strings.TrimSpace(string(version)) {
		t.Errorf("uPlot recorded as %+v, vendored %s", u, version)
	}
	// MIT asks that the licence travel with every copy: each view holds it.
	for _, want := range []string{"uPlot " + u.Version + ", under the MIT License", "Permission is hereby granted"} {
		if !bytes.Contains(viewHTML, []byte(want)) {
			t.Errorf("view.html lacks %q", want)
		}
	}
}
