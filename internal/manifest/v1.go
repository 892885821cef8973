package manifest

import (
	"encoding/json"
	"fmt"
)

// Version 1: the manifest morloc 0.69 to 0.74 embedded in its launcher
// (written by library/Morloc/CodeGenerator/Nexus.hs, buildManifest; read by
// data/morloc/manifest.c, parse_manifest, and used by data/nexus.c, all at
// v0.69.0). It is converted into the structs of the later schema, so that
// everything after loading (the tool surface, the CLI, the drivers) sees one
// format:
//
//	version 1                           later schema
//	build_dir, build_time               build.path, build.time
//	commands[i].arg_schemas[j]          commands[i].args[j].schema
//	commands[i].return_schema, _type,   commands[i].return.schema, .type,
//	  _desc                               .desc
//	args[j].type_desc                   args[j].type
//	grp args[j].metavar                 args[j].type (the record's name
//	                                      unless the docstring set a metavar)
//
// A flag's schema slot (always Bool) is dropped, as the later schema does.
// Version 1 has no positional names (every positional is _N), no pool
// metadata (every pool is morloc's: RuntimeMorloc), no internal commands
// and no terminals.

var v1ArgShape = object(map[string]*shape{
	"kind":      reqStr(),
	"metavar":   str(),
	"type_desc": str(),
	"quoted":    boolean(),
	"desc":      arrayOf(reqStr()),
	"short":     str(),
	"long":      str(),
	"long_rev":  str(),
	"default":   str(),
	"group_opt": object(map[string]*shape{"short": str(), "long": str()}),
})

func init() {
	v1ArgShape.fields["entries"] = arrayOf(object(map[string]*shape{
		"key": reqStr(),
		"arg": required(v1ArgShape),
	}))
}

var v1Shape = required(object(map[string]*shape{
	"version":    required(integer()),
	"name":       reqStr(),
	"build_dir":  str(),
	"build_time": integer(),
	"pools": arrayOf(object(map[string]*shape{
		"lang":   reqStr(),
		"exec":   required(arrayOf(reqStr())),
		"socket": reqStr(), // morloc's nexus needs it (manifest.c, read_pool)
	})),
	"commands": required(arrayOf(object(map[string]*shape{
		"name":          reqStr(),
		"type":          reqStr(),
		"mid":           integer(),
		"pool":          integer(),
		"needed_pools":  arrayOf(required(integer())),
		"arg_schemas":   arrayOf(reqStr()),
		"return_schema": reqStr(),
		"desc":          arrayOf(reqStr()),
		"return_type":   str(),
		"return_desc":   arrayOf(reqStr()),
		"args":          arrayOf(required(v1ArgShape)),
		"group":         str(),
	}))),
	"groups": arrayOf(object(map[string]*shape{
		"name": reqStr(),
		"desc": arrayOf(reqStr()),
	})),
}))

type v1Manifest struct {
	Version   int    `json:"version"`
	Name      string `json:"name"`
	BuildDir  string `json:"build_dir"`
	BuildTime int64  `json:"build_time"`
	Pools     []struct {
		Lang   string   `json:"lang"`
		Exec   []string `json:"exec"`
		Socket string   `json:"socket"`
	} `json:"pools"`
	Commands []v1Command `json:"commands"`
	Groups   []struct {
		Name string   `json:"name"`
		Desc []string `json:"desc"`
	} `json:"groups"`
}

type v1Command struct {
	Name         string          `json:"name"`
	Type         string          `json:"type"`
	Mid          int             `json:"mid"`
	Pool         int             `json:"pool"`
	NeededPools  []int           `json:"needed_pools"`
	ArgSchemas   []string        `json:"arg_schemas"`
	ReturnSchema string          `json:"return_schema"`
	Desc         []string        `json:"desc"`
	ReturnType   string          `json:"return_type"`
	ReturnDesc   []string        `json:"return_desc"`
	Args         []v1Arg         `json:"args"`
	Expr         json.RawMessage `json:"expr"`
	Group        *string         `json:"group"`
}

type v1Arg struct {
	Kind     string    `json:"kind"`
	Metavar  *string   `json:"metavar"`
	TypeDesc string    `json:"type_desc"`
	Quoted   bool      `json:"quoted"`
	Desc     []string  `json:"desc"`
	Short    string    `json:"short"`
	Long     string    `json:"long"`
	LongRev  string    `json:"long_rev"`
	Default  *string   `json:"default"`
	GroupOpt *GroupOpt `json:"group_opt"`
	Entries  []struct {
		Key string `json:"key"`
		Arg v1Arg  `json:"arg"`
	} `json:"entries"`
}

// parseV1 checks a version-1 manifest (raw, decoded from payload) and
// converts it. Faults are reported at their version-1 JSON path.
func parseV1(path string, raw any, payload []byte) (*Manifest, error) {
	fail := func(p, format string, a ...any) error {
		return &Error{Path: p, Msg: fmt.Sprintf(format, a...)}
	}
	if err := checkShape(raw, "", v1Shape); err != nil {
		return nil, err
	}
	var v v1Manifest
	if err := json.Unmarshal(payload, &v); err != nil {
		return nil, fail("", "%v", err)
	}
	if v.Version != 1 {
		return nil, fail("version", "unknown manifest version %d: nexus reads version 1 (morloc 0.69 to 0.74) and the unversioned manifests of morloc 0.75 on", v.Version)
	}
	m := &Manifest{
		Path:   path,
		Dir:    buildDir(path, v.BuildDir),
		Format: FormatV1,
		Name:   v.Name,
		Build:  Build{Path: v.BuildDir, Time: v.BuildTime},
	}
	for _, p := range v.Pools {
		m.Pools = append(m.Pools, Pool{Lang: p.Lang, Exec: p.Exec, Socket: p.Socket})
	}
	for i, c := range v.Commands {
		at := fmt.Sprintf("commands[%d]", i)
		if len(c.ArgSchemas) != len(c.Args) {
			return nil, fail(at+".arg_schemas", "expected one schema per argument: %d schema(s) for %d argument(s)", len(c.ArgSchemas), len(c.Args))
		}
		// Parse here, to report a bad type string at its version-1 path;
		// validate parses them again into the converted command.
		for j, s := range c.ArgSchemas {
			if _, err := ParseType(s); err != nil {
				return nil, fail(fmt.Sprintf("%s.arg_schemas[%d]", at, j), "%v", err)
			}
		}
		if _, err := ParseType(c.ReturnSchema); err != nil {
			return nil, fail(at+".return_schema", "%v", err)
		}
		cmd := Command{
			Name:        c.Name,
			Type:        c.Type,
			Mid:         c.Mid,
			Pool:        c.Pool,
			NeededPools: c.NeededPools,
			Desc:        c.Desc,
			Return:      Return{Schema: c.ReturnSchema, TypeName: c.ReturnType, Desc: c.ReturnDesc},
			Group:       c.Group,
			Expr:        c.Expr,
		}
		for j, a := range c.Args {
			cmd.Args = append(cmd.Args, a.convert(c.ArgSchemas[j]))
		}
		m.Commands = append(m.Commands, cmd)
	}
	for _, g := range v.Groups {
		m.Groups = append(m.Groups, Group{Name: g.Name, Desc: g.Desc})
	}
	// Version 1 knows no NUL check: every pool takes every string.
	for i := range m.Pools {
		m.Pools[i].AllowStringNull = true
	}
	// The checks every manifest gets; with no pool metadata, every pool's
	// runtime is morloc's.
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// convert turns a version-1 argument, whose schema is the command's
// arg_schemas entry at the same index, into an Arg of the later schema.
func (a v1Arg) convert(schema string) Arg {
	out := Arg{
		Kind:     a.Kind,
		Schema:   schema,
		TypeName: a.TypeDesc,
		Metavar:  a.Metavar,
		Quoted:   a.Quoted,
		Desc:     a.Desc,
		Short:    a.Short,
		Long:     a.Long,
		LongRev:  a.LongRev,
		Default:  a.Default,
		GroupOpt: a.GroupOpt,
	}
	switch a.Kind {
	case KindFlag:
		out.Schema = "" // always Bool; the later schema writes none
	case KindGrp:
		// The record's type name is what names the group's property; version
		// 1 writes it only as the metavar's default.
		if a.Metavar != nil {
			out.TypeName = *a.Metavar
		}
	}
	for _, e := range a.Entries {
		out.Entries = append(out.Entries, Entry{Key: e.Key, Arg: e.Arg.convert("")})
	}
	return out
}
