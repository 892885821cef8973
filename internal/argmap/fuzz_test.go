package argmap

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// fuzzTools are the tools the fuzz targets call: json-help's, plus one tool
// per awkward type.
func fuzzTools(t testing.TB) []*Tool {
	jh, _ := Tools(loadManifest(t, "../../testdata/json-help/manifest.json"))
	more, excl := Tools(manifestOf(t,
		remote("sized", "j", pos("i1", ``)+","+pos("u8", ``)+","+pos("?f4", ``), ``),
		remote("nested", "j", pos("am22ids1m<dict>at2s?f8", ``)+","+pos("t3bzs", ``), ``),
		remote("tree", "j", pos("&4Treem24datai14kidsa^4Tree", ``), ``),
		remote("opts", "j", opt("?aj", "list", `"[1]"`, ``)+","+flagArg("on", "true", ``)+","+sysConfig("null"), ``),
		remote("named", "j", pos("s", `,"name":"who"`)+","+pos("<dict>at2sb", `,"many":true`), `,"terminals":[{"long":"up","entry":"named"}]`),
		remote("fixedList", "j", pos("a:2j", ``)+","+pos("a:2a:3f8", ``)+","+pos("a:3?m11xb", ``)+","+pos("?<dict>a:1t2sj", ``), ``),
		remote("star", "j", pos("*", ``)+","+pos("a:2*", ``)+","+pos("?*", ``), ``),
		remote("chain", "j", pos("&4Listt2j?^4List", ``)+","+pos("&1Am11b&1Bt2a^1Aa^1B", ``), ``),
	))
	if len(excl) != 0 {
		t.Fatalf("fuzz tools excluded: %v", excl)
	}
	return append(jh, more...)
}

// FuzzToPositional: whatever the arguments, ToPositional never panics; it
// either rejects them with an *ArgError or returns one valid JSON value per
// manifest argument.
func FuzzToPositional(f *testing.F) {
	tools := fuzzTools(f)
	seeds := []string{
		`{}`, `null`, ``, `[]`, `"x"`, `{"_1":[1,2,3]}`, `{"sysconfig":{"numThreads":2}}`,
		`{"_1":[["a",1],["a",2]]}`, `{"_1":1e999999}`, `{"_1":-128,"_2":18446744073709551615}`,
		`{"_1":{"data":1,"kids":[{"data":2,"kids":[]}]}}`, `{"who":"x","_2":[[["k",true]]],"_render":"up"}`,
		`{"_1":[{"id":"a","m":[["x",1.5]]}],"_2":[true,null,"s"]}`, `{"list":null,"on":false,"tmpDir":"/t"}`,
		`{"_1":[1,2],"_2":[[1,2,3],[4,5,6]],"_3":[null,{"x":true},null],"_4":[["k",1]]}`, `{"_1":[1,2,3]}`,
		`{"_1":{"a":[1]},"_2":[1,"x"],"_3":null}`, `{"_1":[1,[2,null]],"_2":{"b":[[{"b":[[],[]]}],[]]}}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		tool := tools[int(which)%len(tools)]
		call, err := tool.ToPositional(json.RawMessage(args))
		if err != nil {
			var ae *ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("%s %q: error is %T, not *ArgError: %v", tool.Name, args, err, err)
			}
			if ae.Error() == "" || ae.Tool != tool.Name {
				t.Fatalf("bad ArgError %#v", ae)
			}
			return
		}
		if len(call.Args) != len(tool.Command.Args) {
			t.Fatalf("%s %q: %d values for %d arguments", tool.Name, args, len(call.Args), len(tool.Command.Args))
		}
		for i, a := range call.Args {
			if !json.Valid(a) {
				t.Fatalf("%s %q: argument %d is not valid JSON: %s", tool.Name, args, i, a)
			}
		}
	})
}

// FuzzFromCLI: argv parsing never panics and, on success, yields one valid
// JSON value per manifest argument.
func FuzzFromCLI(f *testing.F) {
	m := loadManifest(f, "../../testdata/json-help/manifest.json")
	cmds := m.Exported()
	for i, s := range []string{"1\x002\x003", "-t\x004\x00--clean", "--sys-config\x00{\"numThreads\":1}", "--\x00-x", "[[\"a\",1]]", "-tx", "--threads="} {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, joined string) {
		c := cmds[int(which)%len(cmds)]
		var argv []string
		if joined != "" {
			argv = strings.Split(joined, "\x00")
		}
		args, err := FromCLI(c, argv)
		if err != nil {
			return
		}
		checkArgs(t, c, args)
	})
}

func checkArgs(t *testing.T, c *manifest.Command, args []json.RawMessage) {
	t.Helper()
	if len(args) != len(c.Args) {
		t.Fatalf("%s: %d values for %d arguments", c.Name, len(args), len(c.Args))
	}
	for i, a := range args {
		if !json.Valid(a) {
			t.Fatalf("%s: argument %d is not valid JSON: %s", c.Name, i, a)
		}
	}
}

// FuzzReadForm: whatever a file holds, reading it as an argument by any
// form (shape.go) never panics; it gives an error or valid JSON. Files
// are what a client of the MCP surface may point nexus at.
func FuzzReadForm(f *testing.F) {
	schemas := []string{"s", "aj", "ai4", "af8", "ab", "au1", "at2js", "am21ij1ks", "aau1", "?s", "as", "&4Treem24datai14kidsa^4Tree"}
	forms := []string{manifest.FormAuto, manifest.FormBytes, manifest.FormBytesOnly, manifest.FormPacket, manifest.FormList}
	for _, s := range []string{"1\n2\n", "[1,2]", "\x92\x01\x02", "a\tb\n1,2\n", packetOf("aj", 0x92, 0x01, 0x02), "nan", "\x00\x01\x02\x03", `"x"`} {
		f.Add(uint8(0), uint8(0), []byte(s))
	}
	fs := memFS(map[string]string{"/f": "1"}, "")
	f.Fuzz(func(t *testing.T, which, form uint8, data []byte) {
		ty, err := manifest.ParseType(schemas[int(which)%len(schemas)])
		if err != nil {
			t.Fatal(err)
		}
		a := &manifest.Arg{Kind: manifest.KindPos, Source: manifest.SourceFile, Form: forms[int(form)%len(forms)],
			ListSource: []string{manifest.SourceInline, manifest.SourceFile, manifest.SourceAuto}[int(form/8)%3], ListForm: manifest.FormAuto}
		v, err := readForm(data, "x.bin", a, ty, fs)
		if err == nil && !json.Valid(v) {
			t.Fatalf("%s as %s (%s): invalid JSON %q", data, schemas[int(which)%len(schemas)], a.Form, v)
		}
	})
}
