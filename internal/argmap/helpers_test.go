package argmap

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// remote is the JSON of a remote command; extra holds more members, each
// starting with a comma.
func remote(name, ret, args, extra string) string {
	return `{"name":"` + name + `","type":"remote","mid":1,"pool":0,"needed_pools":[0],"desc":["Does ` + name + `"],` +
		`"args":[` + args + `],"return":{"schema":"` + ret + `","type":"T","desc":[]}` + extra + `}`
}

// manifestOf parses a manifest holding the given commands and one Python pool.
func manifestOf(t testing.TB, commands ...string) *manifest.Manifest {
	t.Helper()
	data := `{"name":"t","pools":[{"lang":"py","exec":["python3","pools/py/pool.py"],"metadata":{"runtime":"nexus"}}],"commands":[` +
		strings.Join(commands, ",") + `]}`
	m, err := manifest.Parse("/test/manifest.json", []byte(data))
	if err != nil {
		t.Fatalf("test manifest: %v\n%s", err, data)
	}
	return m
}

// toolOf builds the tool of the only exported command of a manifest.
func toolOf(t testing.TB, commands ...string) *Tool {
	t.Helper()
	tools, excl := Tools(manifestOf(t, commands...))
	if len(excl) != 0 || len(tools) != 1 {
		t.Fatalf("want one tool, got %d tools and exclusions %v", len(tools), excl)
	}
	return tools[0]
}

// errAsWanted checks a case's err against want, a part of the message it
// expects ("" for none), failing t and naming the case when they disagree;
// it reports whether the case has a result left to check.
func errAsWanted(t *testing.T, name string, err error, want string) bool {
	t.Helper()
	switch {
	case want != "":
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", name, err, want)
		}
		return false
	case err != nil:
		t.Errorf("%s: %v", name, err)
		return false
	}
	return true
}

// rewriteObjects is a copy of v with f applied to each Object in it,
// innermost first.
func rewriteObjects(v any, f func(Object) Object) any {
	switch x := v.(type) {
	case Object:
		out := make(Object, len(x))
		for i, m := range x {
			out[i] = Member{m.Key, rewriteObjects(m.Value, f)}
		}
		return f(out)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rewriteObjects(e, f)
		}
		return out
	}
	return v
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Argument JSON builders.
func pos(schema string, more string) string {
	return `{"kind":"pos","schema":"` + schema + `","type":"T","name":null,"metavar":null,"quoted":false,"many":false,"stdin":false,"desc":[]` + more + `}`
}

func opt(schema, long, def string, more string) string {
	return `{"kind":"opt","schema":"` + schema + `","type":"T","long":"` + long + `","default":` + def + `,"desc":[]` + more + `}`
}

func flagArg(long, def string, more string) string {
	return `{"kind":"flag","long":"` + long + `","long_rev":"no-` + long + `","default":"` + def + `","desc":[]` + more + `}`
}

// sysConfig is the json-help program's record group; groupOpt is "null" or
// a group_opt object.
func sysConfig(groupOpt string) string {
	return `{"kind":"grp","schema":"<dict>m36tmpDirsanumThreadsjcremoveCachesb","type":"SysConfig","metavar":"SYS_CONFIG",
	 "desc":["System configuration"],"group_opt":` + groupOpt + `,"entries":[
	  {"key":"tmpDir","arg":{"kind":"opt","type":"Str","quoted":true,"long":"tmp-dir","default":"\"/tmp\"","desc":["Scratch dir"]}},
	  {"key":"numThreads","arg":{"kind":"opt","type":"Int","short":"t","long":"threads","default":"1","desc":["Threads"]}},
	  {"key":"removeCaches","arg":{"kind":"flag","long":"clean","long_rev":"no-clean","default":"false","desc":["Purge caches"]}}]}`
}
