package argmap

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/nexus-mcp/nexus/internal/jsontext/jsontexttest"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// TestTypeSchema covers every row of docs/spec.md §4.5's type table, as
// an output schema writes it.
func TestTypeSchema(t *testing.T) {
	cases := []struct{ schema, want string }{
		{"z", `{"type":"null"}`},
		{"b", `{"type":"boolean"}`},
		{"j", `{"type":"integer"}`},
		// Sized integers carry their range (morloc 0.69's Int is i4); j has none.
		{"i1", `{"type":"integer","minimum":-128,"maximum":127}`},
		{"i2", `{"type":"integer","minimum":-32768,"maximum":32767}`},
		{"i4", `{"type":"integer","minimum":-2147483648,"maximum":2147483647}`},
		{"i8", `{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807}`},
		{"u1", `{"type":"integer","minimum":0,"maximum":255}`},
		{"u2", `{"type":"integer","minimum":0,"maximum":65535}`},
		{"u4", `{"type":"integer","minimum":0,"maximum":4294967295}`},
		{"u8", `{"type":"integer","minimum":0,"maximum":18446744073709551615}`},
		{"<int>i4", `{"type":"integer","minimum":-2147483648,"maximum":2147483647}`},
		{"?u1", `{"type":["integer","null"],"minimum":0,"maximum":255}`},
		// In a result, a Real is a number or a string for NaN or an
		// infinity, wherever it is: alone, optional, in a list, a tuple, a
		// Map, a record.
		{"f4", `{"anyOf":[{"type":"number"},{"enum":["NaN","Infinity","-Infinity"]}]}`},
		{"f8", `{"anyOf":[{"type":"number"},{"enum":["NaN","Infinity","-Infinity"]}]}`},
		{"s", `{"type":"string"}`},
		{"<double>f8", `{"anyOf":[{"type":"number"},{"enum":["NaN","Infinity","-Infinity"]}]}`},
		{"?f8", `{"anyOf":[{"type":["number","null"]},{"enum":["NaN","Infinity","-Infinity"]}]}`},
		{"??f4", `{"anyOf":[{"type":["number","null"]},{"enum":["NaN","Infinity","-Infinity"]}]}`},
		{"af8", `{"type":"array","items":{"anyOf":[{"type":"number"},{"enum":["NaN","Infinity","-Infinity"]}]}}`},
		{"a?f8", `{"type":"array","items":{"anyOf":[{"type":["number","null"]},{"enum":["NaN","Infinity","-Infinity"]}]}}`},
		{"t2sf8", `{"type":"array","prefixItems":[{"type":"string"},{"anyOf":[{"type":"number"},{"enum":["NaN","Infinity","-Infinity"]}]}],"minItems":2,"maxItems":2}`},
		{"<dict>at2sf8", `{"type":"array","items":{"type":"array","prefixItems":[{"type":"string"},{"anyOf":[{"type":"number"},{"enum":["NaN","Infinity","-Infinity"]}]}],"minItems":2,"maxItems":2}}`},
		{"m21xf81y?f4", `{"type":"object","properties":{"x":{"anyOf":[{"type":"number"},{"enum":["NaN","Infinity","-Infinity"]}]},"y":{"anyOf":[{"type":["number","null"]},{"enum":["NaN","Infinity","-Infinity"]}]}},"required":["x"],"additionalProperties":false}`},
		{"aj", `{"type":"array","items":{"type":"integer"}}`},
		{"aas", `{"type":"array","items":{"type":"array","items":{"type":"string"}}}`},
		{"t2sj", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"minItems":2,"maxItems":2}`},
		{"t0", `{"type":"array","prefixItems":[],"minItems":0,"maxItems":0}`},
		{"m24names3age?j", `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":["integer","null"]}},"required":["name"],"additionalProperties":false}`},
		{"m0", `{"type":"object","properties":{},"required":[],"additionalProperties":false}`},
		{"?j", `{"type":["integer","null"]}`},
		{"??s", `{"type":["string","null"]}`},
		{"?z", `{"type":"null"}`},
		{"?aj", `{"type":["array","null"],"items":{"type":"integer"}}`},
		{"?m11xb", `{"type":["object","null"],"properties":{"x":{"type":"boolean"}},"required":["x"],"additionalProperties":false}`},
		{"<dict>at2sj", `{"type":"array","items":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"minItems":2,"maxItems":2}}`},
		{"<std::map<$1,$2>>at2sj", `{"type":"array","items":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"minItems":2,"maxItems":2}}`},
		{"a:3j", `{"type":"array","items":{"type":"integer"},"minItems":3,"maxItems":3}`},
		{"a:2a:3j", `{"type":"array","items":{"type":"array","items":{"type":"integer"},"minItems":3,"maxItems":3},"minItems":2,"maxItems":2}`},
		{"a:0j", `{"type":"array","items":{"type":"integer"}}`},
		{"?a:1s", `{"type":["array","null"],"items":{"type":"string"},"minItems":1,"maxItems":1}`},
		{"*", `{}`},
		{"?*", `{}`},
		{"a*", `{"type":"array","items":{}}`},
		{"m11x*", `{"type":"object","properties":{"x":{}},"required":["x"],"additionalProperties":false}`},
		// A declaration maps as its body where it is written; the body is
		// also under $defs for the back-references.
		{"&4Treem24dataab4kidsa^4Tree", `{"type":"object","properties":{"data":{"type":"array","items":{"type":"boolean"}},"kids":{"type":"array","items":{"$ref":"#/$defs/Tree"}}},"required":["data","kids"],"additionalProperties":false,` +
			`"$defs":{"Tree":{"type":"object","properties":{"data":{"type":"array","items":{"type":"boolean"}},"kids":{"type":"array","items":{"$ref":"#/$defs/Tree"}}},"required":["data","kids"],"additionalProperties":false}}}`},
		// An optional back-reference: anyOf with null.
		{"&4Listt2j?^4List", `{"type":"array","prefixItems":[{"type":"integer"},{"anyOf":[{"$ref":"#/$defs/List"},{"type":"null"}]}],"minItems":2,"maxItems":2,` +
			`"$defs":{"List":{"type":"array","prefixItems":[{"type":"integer"},{"anyOf":[{"$ref":"#/$defs/List"},{"type":"null"}]}],"minItems":2,"maxItems":2}}}`},
		{"?&4Listm24headj4tail?^4List", `{"type":["object","null"],"properties":{"head":{"type":"integer"},"tail":{"anyOf":[{"$ref":"#/$defs/List"},{"type":"null"}]}},"required":["head"],"additionalProperties":false,` +
			`"$defs":{"List":{"type":"object","properties":{"head":{"type":"integer"},"tail":{"anyOf":[{"$ref":"#/$defs/List"},{"type":"null"}]}},"required":["head"],"additionalProperties":false}}}`},
		// Under $defs, a nested declaration is a $ref to its own body.
		{"&1Am11b&1Bt2a^1Aa^1B", `{"type":"object","properties":{"b":{"type":"array","prefixItems":[{"type":"array","items":{"$ref":"#/$defs/A"}},{"type":"array","items":{"$ref":"#/$defs/B"}}],"minItems":2,"maxItems":2}},"required":["b"],"additionalProperties":false,` +
			`"$defs":{"A":{"type":"object","properties":{"b":{"$ref":"#/$defs/B"}},"required":["b"],"additionalProperties":false},"B":{"type":"array","prefixItems":[{"type":"array","items":{"$ref":"#/$defs/A"}},{"type":"array","items":{"$ref":"#/$defs/B"}}],"minItems":2,"maxItems":2}}}`},
		// A declaration nothing refers to needs no $defs; two alike share one.
		{"&1Am21xa&1Bm11ya^1B1z?&1Bm11ya^1B", `{"type":"object","properties":{"x":{"type":"array","items":{"type":"object","properties":{"y":{"type":"array","items":{"$ref":"#/$defs/B"}}},"required":["y"],"additionalProperties":false}},"z":{"type":["object","null"],"properties":{"y":{"type":"array","items":{"$ref":"#/$defs/B"}}},"required":["y"],"additionalProperties":false}},"required":["x"],"additionalProperties":false,` +
			`"$defs":{"B":{"type":"object","properties":{"y":{"type":"array","items":{"$ref":"#/$defs/B"}}},"required":["y"],"additionalProperties":false}}}`},
		// Names become keys that need no escaping in a $ref.
		{"&3a/bm11xa^3a/b", `{"type":"object","properties":{"x":{"type":"array","items":{"$ref":"#/$defs/a_b"}}},"required":["x"],"additionalProperties":false,` +
			`"$defs":{"a_b":{"type":"object","properties":{"x":{"type":"array","items":{"$ref":"#/$defs/a_b"}}},"required":["x"],"additionalProperties":false}}}`},
		{"T", `{"type":"array","items":{"type":"object","properties":{},"required":[],"additionalProperties":false}}`},
		{"T:21xaj1ys", `{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"string"}},"required":["x","y"],"additionalProperties":false}}`},
		{"F", `{"type":"string"}`},
		{"I", `{"type":"string"}`},
		{"O", `{"type":"string"}`},
	}
	for _, c := range cases {
		t.Run(c.schema, func(t *testing.T) {
			typ, err := manifest.ParseType(c.schema)
			if err != nil {
				t.Fatal(err)
			}
			got := mustJSON(t, typeSchema(typ))
			if got != c.want {
				t.Errorf("schema of %s:\n got %s\nwant %s", c.schema, got, c.want)
			}
		})
	}
}

// A tool's recursive types share the $defs at its input schema's root: two
// declarations alike share a key, two of one name but different bodies get
// two. A recursive record return has its own $defs in its output schema.
func TestRecursiveToolSchemas(t *testing.T) {
	tool := toolOf(t, remote("trees", "&4Listm24headj4tail?^4List",
		pos("&4Treem24datai14kidsa^4Tree", ``)+","+pos("&4Treem14kidsa^4Tree", ``)+","+pos("a&4Treem24datai14kidsa^4Tree", ``), ``))
	tree := func(data bool, key string) string {
		s := `{"type":"object","properties":{`
		req := `"kids"`
		if data {
			s += `"data":{"type":"integer","minimum":-128,"maximum":127},`
			req = `"data","kids"`
		}
		return s + `"kids":{"type":"array","items":{"$ref":"#/$defs/` + key + `"}}},"required":[` + req + `],"additionalProperties":false}`
	}
	wantIn := `{"type":"object","properties":{"_1":` + tree(true, "Tree") + `,"_2":` + tree(false, "Tree_2") +
		`,"_3":{"type":"array","items":` + tree(true, "Tree") + `}},"required":["_1","_2","_3"],"additionalProperties":false,` +
		`"$defs":{"Tree":` + tree(true, "Tree") + `,"Tree_2":` + tree(false, "Tree_2") + `}}`
	if got := mustJSON(t, tool.InputSchema); got != wantIn {
		t.Errorf("input schema:\n got %s\nwant %s", got, wantIn)
	}
	list := `{"type":"object","properties":{"head":{"type":"integer"},"tail":{"anyOf":[{"$ref":"#/$defs/List"},{"type":"null"}]}},"required":["head"],"additionalProperties":false`
	wantOut := list + `,"$defs":{"List":` + list + `}}}`
	if got := mustJSON(t, tool.OutputSchema); got != wantOut {
		t.Errorf("output schema:\n got %s\nwant %s", got, wantOut)
	}
	// Both documents compile as JSON Schema 2020-12, their $refs resolve,
	// and they validate what the types say.
	for _, c := range []struct {
		doc       Object
		good, bad string
	}{
		{tool.InputSchema, `{"_1":{"data":1,"kids":[{"data":2,"kids":[]}]},"_2":{"kids":[{"kids":[]}]},"_3":[]}`,
			`{"_1":{"data":1,"kids":[{"data":2,"kids":[{"kids":[]}]}]},"_2":{"kids":[]},"_3":[]}`},
		{tool.OutputSchema, `{"head":1,"tail":{"head":2,"tail":null}}`, `{"head":1,"tail":{"head":"x"}}`},
	} {
		sch := compileSchema(t, c.doc)
		if err := sch.Validate(jsontexttest.Decode(t, []byte(c.good))); err != nil {
			t.Errorf("%s: %v", c.good, err)
		}
		if err := sch.Validate(jsontexttest.Decode(t, []byte(c.bad))); err == nil {
			t.Errorf("%s: accepted", c.bad)
		}
	}
}

// An input schema shows a Real as morloc's --mcp-tools does,
// {"type":"number"} (["number","null"] when optional), in every shape;
// the schema nexus validates against widens each one to take "NaN",
// "Infinity" and "-Infinity" too; an output schema keeps the widening
// (docs/spec.md §4.5).
func TestInputSchemaReals(t *testing.T) {
	const (
		num     = `{"type":"number"}`
		enum    = `{"enum":["NaN","Infinity","-Infinity"]}`
		wide    = `{"anyOf":[{"type":"number"},` + enum + `]}`
		optWide = `{"anyOf":[{"type":["number","null"]},` + enum + `]}`
	)
	record := func(x, y string) string {
		return `{"type":"object","properties":{"x":` + x + `,"y":` + y + `},"required":["x"],"additionalProperties":false}`
	}
	tree := func(data string) string {
		return `{"type":"object","properties":{"data":` + data + `,"kids":{"type":"array","items":{"$ref":"#/$defs/Tree"}}},"required":["data","kids"],"additionalProperties":false}`
	}
	cases := []struct {
		name, schema         string
		input, validation    string // the property's schema in each document
		inputDefs, validDefs string // the root's "$defs", "" for none
	}{
		{"[Real]", "af8", `{"type":"array","items":` + num + `}`, `{"type":"array","items":` + wide + `}`, "", ""},
		{"?Real", "?f8", `{"type":["number","null"]}`, optWide, "", ""},
		{"record with a Real", "m21xf81y?f4", record(num, `{"type":["number","null"]}`), record(wide, optWide), "", ""},
		{"Real in $defs", "&4Treem24dataf84kidsa^4Tree", tree(num), tree(wide), `{"Tree":` + tree(num) + `}`, `{"Tree":` + tree(wide) + `}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tool := toolOf(t, remote("f", c.schema, pos(c.schema, ``), ``))
			for _, doc := range []struct {
				name       string
				o          Object
				prop, defs string
			}{
				{"inputSchema", tool.InputSchema, c.input, c.inputDefs},
				{"validationSchema", tool.validationSchema(), c.validation, c.validDefs},
			} {
				props, _ := doc.o.Get("properties")
				p, _ := props.(Object).Get("_1")
				if got := mustJSON(t, p); got != doc.prop {
					t.Errorf("%s property:\n got %s\nwant %s", doc.name, got, doc.prop)
				}
				defs, ok := doc.o.Get("$defs")
				if got := mustJSON(t, defs); ok != (doc.defs != "") || ok && got != doc.defs {
					t.Errorf("%s $defs:\n got %s\nwant %s", doc.name, got, doc.defs)
				}
			}
			if strings.Contains(mustJSON(t, tool.InputSchema), "NaN") {
				t.Errorf("input schema %s names NaN", mustJSON(t, tool.InputSchema))
			}
			if tool.OutputSchema != nil && !strings.Contains(mustJSON(t, tool.OutputSchema), enum) {
				t.Errorf("output schema %s: a Real is not widened", mustJSON(t, tool.OutputSchema))
			}
		})
	}
}

func compileSchema(t *testing.T, doc Object) *jsonschema.Schema {
	t.Helper()
	b, err := doc.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource("doc.json", bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("doc.json")
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return sch
}

func TestIsStrMap(t *testing.T) {
	cases := map[string]bool{
		"<dict>at2sj":    true,
		"<dict>at2s?j":   true,
		"<dict>at2<k>sj": true,
		"at2sj":          false, // no hint: a plain list of pairs
		"<list>at2sj":    false, // a hint other than dict
		"<dict>at2jj":    false, // integer keys stay pairs
		"<dict>at3sjj":   false,
		"<dict>as":       false,
	}
	for schema, want := range cases {
		typ, err := manifest.ParseType(schema)
		if err != nil {
			t.Fatal(err)
		}
		if got := isStrMap(typ); got != want {
			t.Errorf("isStrMap(%s) = %v, want %v", schema, got, want)
		}
	}
}

func TestObjectMarshal(t *testing.T) {
	cases := []struct {
		name string
		in   Object
		want string
	}{
		{"keeps order", Object{{"z", 1}, {"a", true}, {"m", nil}}, `{"z":1,"a":true,"m":null}`},
		{"empty", Object{}, `{}`},
		{"nil", nil, `{}`},
		{"no HTML escaping", Object{{"d", "Map <dict> & co"}}, `{"d":"Map <dict> & co"}`},
		{"escapes", Object{{"d", "a\"b\\c\n\t\x01"}}, `{"d":"a\"b\\c\n\t\u0001"}`},
		{"invalid UTF-8", Object{{"d", "a\xffb"}}, `{"d":"a\ufffdb"}`},
		{"unicode kept", Object{{"d", "é→"}}, `{"d":"é→"}`},
		{"nested", Object{{"o", Object{{"b", []any{"x", json.Number("12345678901234567890")}}}}, {"s", []string{"p"}}}, `{"o":{"b":["x",12345678901234567890]},"s":["p"]}`},
		{"raw compacted", Object{{"r", json.RawMessage(`[ 1, 2 ]`)}}, `{"r":[1,2]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := c.in.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Errorf("got %s, want %s", b, c.want)
			}
			if !json.Valid(b) {
				t.Errorf("not valid JSON: %s", b)
			}
		})
	}
	if v, ok := (Object{{"a", 1}}).Get("a"); !ok || v != 1 {
		t.Errorf("Get(a) = %v, %v", v, ok)
	}
	if _, ok := (Object{{"a", 1}}).Get("b"); ok {
		t.Errorf("Get(b) found a missing key")
	}
	// Encoded inside another value, key order survives.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode([]any{Object{{"b", 1}, {"a", "<"}}}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "[{\"b\":1,\"a\":\"<\"}]\n" {
		t.Errorf("nested encode: %q", got)
	}
}

// morloc 0.69 writes its schema strings with native type hints and Int as
// i4: they map to the schemas of 0.98's equivalents, but for the range a
// sized integer adds (TestTypeSchema).
func TestV069SchemasMatchV098(t *testing.T) {
	cases := []struct{ v069, v098 string }{
		{"<int>i4", "j"},
		{"<float>f8", "f8"},
		{"<str>s", "s"},
		{"<bool>b", "b"},
		{"<list>a<int>i4", "aj"},
		{"<std::vector<$1>>a<int>i4", "aj"},
		{"<std::vector<$1>>a<std::vector<$1>>a<double>f8", "aaf8"},
		{"<dict>m26nwords<int>i47longest<str>s", "m26nwordsj7longests"},
		{"<dict>m36tmpDir<str>sanumThreads<int>i4cremoveCaches<bool>b", "<dict>m36tmpDirsanumThreadsjcremoveCachesb"},
		{"<tuple>t2<str>s<int>i4", "t2sj"},
		{"<dict>at2<str>s<int>i4", "<dict>at2sj"},
		{"<std::map<$1,$2>>at2<std::string>s<int>i4", "<std::map<$1,$2>>at2sj"},
		{"?<int>i4", "?j"},
		{"<list>a?<dict>m11x<int>i4", "a?m11xj"},
	}
	for _, c := range cases {
		t.Run(c.v069, func(t *testing.T) {
			old, err := manifest.ParseType(c.v069)
			if err != nil {
				t.Fatal(err)
			}
			cur, err := manifest.ParseType(c.v098)
			if err != nil {
				t.Fatal(err)
			}
			got, want := mustJSON(t, withoutRanges(typeSchema(old))), mustJSON(t, typeSchema(cur))
			if got != want {
				t.Errorf("0.69's %s maps to\n %s\nand 0.98's %s to\n %s", c.v069, got, c.v098, want)
			}
			if old.Contains(manifest.Int) && !strings.Contains(mustJSON(t, typeSchema(old)), `"maximum":2147483647`) {
				t.Errorf("0.69's %s has no range for its i4", c.v069)
			}
		})
	}
}

// withoutRanges removes "minimum" and "maximum" from a schema, at any depth.
func withoutRanges(v any) Object {
	return rewriteObjects(v, func(o Object) Object {
		out := Object{}
		for _, m := range o {
			if m.Key != "minimum" && m.Key != "maximum" {
				out = append(out, m)
			}
		}
		return out
	}).(Object)
}
