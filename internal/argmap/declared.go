package argmap

import (
	"github.com/nexus-mcp/nexus/internal/jsontext"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// declaredType writes a command's return type as a call's "returns" member
// describes it to a pool (docs/internals.md, "Declared types"), so that
// a runtime can give its language's values the declared shape (an R vector
// of length one where a list is declared, a numpy array, a namedtuple where
// a record is declared): "int", "real", "bool", "str", "null", "any";
// {"list":T}, {"tuple":[T,...]}, {"record":{"key":T,...}} (fields in
// declaration order), {"opt":T}, {"map":T} (a Map with string keys, of
// values T; other Maps are lists of pairs). A recursive type is its body
// with "any" at each back-reference; tables and handles are "any". nil for
// a mime return (bytes) or no type.
func declaredType(r *manifest.Return) []byte {
	if r == nil || r.T == nil || r.Mime != "" {
		return nil
	}
	return appendDeclared(nil, r.T, 0)
}

// declaredArgs writes the declared types of a command's arguments, one per
// manifest argument, as a JSON array of declaredType's forms: a call's
// "takes" member, sent to pools that asked for it.
func declaredArgs(c *manifest.Command) []byte {
	b := []byte{'['}
	for i := range c.Args {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendDeclared(b, argType(&c.Args[i]), 0)
	}
	return append(b, ']')
}

func appendDeclared(b []byte, t *manifest.Type, depth int) []byte {
	t = t.Unwrap()
	if t == nil || depth > 64 {
		return append(b, `"any"`...)
	}
	switch t.Kind {
	case manifest.Nil:
		return append(b, `"null"`...)
	case manifest.Bool:
		return append(b, `"bool"`...)
	case manifest.Str:
		return append(b, `"str"`...)
	case manifest.Int:
		return append(b, `"int"`...)
	case manifest.Float:
		return append(b, `"real"`...)
	case manifest.Optional:
		b = append(b, `{"opt":`...)
		return append(appendDeclared(b, t.Elem, depth+1), '}')
	case manifest.List:
		if isStrMap(t) {
			b = append(b, `{"map":`...)
			return append(appendDeclared(b, t.Elem.Unwrap().Items[1], depth+1), '}')
		}
		b = append(b, `{"list":`...)
		return append(appendDeclared(b, t.Elem, depth+1), '}')
	case manifest.Tuple:
		b = append(b, `{"tuple":[`...)
		for i, it := range t.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendDeclared(b, it, depth+1)
		}
		return append(b, "]}"...)
	case manifest.Record:
		b = append(b, `{"record":{`...)
		for i, f := range t.Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsontext.AppendQuoted(b, f.Key)
			b = append(b, ':')
			b = appendDeclared(b, f.Type, depth+1)
		}
		return append(b, "}}"...)
	}
	return append(b, `"any"`...) // `*`, back-references, tables, handles
}
