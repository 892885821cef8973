package views

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// command is a command returning schema, with the given metadata.view
// (none when empty).
func command(t *testing.T, schema, view string) *manifest.Command {
	t.Helper()
	typ, err := manifest.ParseType(schema)
	if err != nil {
		t.Fatalf("ParseType(%q): %v", schema, err)
	}
	c := &manifest.Command{Name: "f", Return: manifest.Return{Schema: schema, T: typ}}
	if view != "" {
		c.Metadata = map[string]json.RawMessage{"view": json.RawMessage(view)}
	}
	return c
}

func TestForChoosesFromTheDeclaredType(t *testing.T) {
	cases := []struct {
		schema  string
		want    Kind // "" for none
		wrapped bool
		columns []string
	}{
		{"af8", Chart, true, nil},
		{"aj", Chart, true, nil},
		{"a?f8", Chart, true, nil},               // missing values are gaps
		{"<numpy.ndarray>af8", Chart, true, nil}, // a 1-D numpy array is typed as a list
		{"aaf8", Heatmap, true, nil},
		{"a:20a:30j", Heatmap, true, nil},
		{"am24names3agej", Table, true, []string{"name", "age"}},
		{"at2sj", Table, true, []string{"1", "2"}},
		{"<dict>at2sj", Table, true, []string{"key", "value"}},
		{"as", Table, true, nil},
		{"m24names3agej", Record, false, nil},
		{"<dict>m24names3agej", Record, false, nil},
		{"?m24names3agej", Record, true, nil}, // no outputSchema: wrapped
		{"s", Text, true, nil},
		{"?s", Text, true, nil},
		{"j", JSON, true, nil},
		{"b", JSON, true, nil},
		{"t2sj", JSON, true, nil},
		{"aaaf8", JSON, true, nil},
		{"z", "", false, nil},
	}
	for _, c := range cases {
		v, ok, err := For(command(t, c.schema, ""))
		if err != nil {
			t.Errorf("%s: %v", c.schema, err)
			continue
		}
		if got := map[bool]Kind{true: v.Kind}[ok]; got != c.want {
			t.Errorf("%s: view %q, want %q", c.schema, got, c.want)
			continue
		}
		if ok && (v.Wrapped != c.wrapped || !slices.Equal(v.Columns, c.columns) || v.Type != c.schema) {
			t.Errorf("%s: %+v, want wrapped %v, columns %q, type %q", c.schema, v, c.wrapped, c.columns, c.schema)
		}
	}
}

func TestForImagesAndFiles(t *testing.T) {
	png := command(t, "s", "")
	png.Return.Mime = "image/png"
	svg := command(t, "s", "")
	svg.Return.Mime = "image/svg+xml"
	text := command(t, "s", "")
	text.Return.Mime = "text/csv"
	audio := command(t, "s", "")
	audio.Return.Mime = "audio/wav"
	plot := command(t, "s", "")
	plot.FileResult = &manifest.FileResult{MimeType: "image/png"}
	data := command(t, "s", "")
	data.FileResult = &manifest.FileResult{MimeType: "text/csv"}
	for _, c := range []struct {
		name string
		cmd  *manifest.Command
		want Kind
	}{{"png", png, Image}, {"svg", svg, Image}, {"text", text, Text}, {"audio", audio, ""}, {"png file", plot, Image}, {"csv file", data, ""}} {
		v, ok, err := For(c.cmd)
		if err != nil || map[bool]Kind{true: v.Kind}[ok] != c.want {
			t.Errorf("%s: %q %v %v, want %q", c.name, v.Kind, ok, err, c.want)
		}
	}
}

func TestForMetadata(t *testing.T) {
	cases := []struct {
		schema, view string
		want         Kind
		err          string
	}{
		{"af8", `false`, "", ""},
		{"af8", `true`, Chart, ""},
		{"af8", `null`, Chart, ""},
		{"af8", `"table"`, Table, ""},
		{"af8", `"json"`, JSON, ""},
		{"aaf8", `"table"`, Table, ""},
		{"m24names3agej", `"json"`, JSON, ""},
		{"aas", `"table"`, Table, ""},
		{"aas", ``, JSON, ""},
		{"m24names3agej", `"table"`, "", `(views that fit: record, json, text)`},
		{"s", `"text"`, Text, ""},
		{"s", `"chart"`, "", `view "chart" does not fit f's result, s: it draws a list of numbers (views that fit: text, json)`},
		{"af8", `"image"`, "", `view "image" does not fit`},
		{"z", `"json"`, "", `(views that fit: )`},
		{"af8", `"pie"`, "", `expected false (no view), true, or one of chart, table, heatmap, record, text, image, json, got "pie"`},
		{"af8", `1`, "", "expected false"},
	}
	for _, c := range cases {
		v, ok, err := For(command(t, c.schema, c.view))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %s: error %v, want one containing %q", c.schema, c.view, err, c.err)
			}
			continue
		}
		if err != nil || map[bool]Kind{true: v.Kind}[ok] != c.want {
			t.Errorf("%s %s: %q %v %v, want %q", c.schema, c.view, v.Kind, ok, err, c.want)
		}
	}
}

func TestTypeNameIsShownWhenDeclared(t *testing.T) {
	c := command(t, "af8", "")
	c.Return.TypeName = "[Real]"
	v, _, _ := For(c)
	if v.Type != "[Real]" {
		t.Errorf("type %q, want [Real]", v.Type)
	}
}
