package morloccorpus

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// These map nexus's deliberate differences from morloc's tool surface
// (testdata/morloc/README.md, "Deliberate differences") back to morloc's
// form, on documents as Decode reads them.

// PathSentence is what nexus appends to a `source: file` argument's
// description: the value is a path on nexus's machine, with the
// compiler's format hint (format, "" for none) unless it says only that.
func PathSentence(format string) string {
	s := "Path of a file on the machine nexus runs on; nexus reads it, and its content is the value"
	if format != "" && format != "read the value from the file at this path" {
		s += " (" + format + ")"
	}
	return s + "."
}

// sizedRanges are the ranges of morloc's sized integers (i1..i8, u1..u8),
// written out here rather than taken from nexus's code.
var sizedRanges = map[[2]string]bool{
	{"-128", "127"}: true, {"-32768", "32767"}: true,
	{"-2147483648", "2147483647"}: true, {"-9223372036854775808", "9223372036854775807"}: true,
	{"0", "255"}: true, {"0", "65535"}: true, {"0", "4294967295"}: true, {"0", "18446744073709551615"}: true,
}

// UnboundInts drops "minimum" and "maximum" from an integer schema (or an
// optional one) whose pair is one sized integer type's range.
func UnboundInts(v any) any {
	return rewrite(v, func(x Object) Object {
		lo, hasLo := x.Get("minimum")
		hi, hasHi := x.Get("maximum")
		typ, _ := x.Get("type")
		integer := typ == "integer" || reflect.DeepEqual(typ, []any{"integer", "null"})
		if !integer || !hasLo || !hasHi || !sizedRanges[[2]string{fmt.Sprint(lo), fmt.Sprint(hi)}] {
			return x
		}
		return x.without("minimum", "maximum")
	})
}

// NarrowReals maps a Real's widened schema in an outputSchema
// ({"anyOf":[{"type":"number"},{"enum":["NaN","Infinity","-Infinity"]}]},
// which lets a result's NaN and infinities through) back to its type. An
// inputSchema's Real is left as it is: nexus writes {"type":"number"} there,
// as morloc does.
func NarrowReals(v any) any {
	return rewrite(v, func(x Object) Object {
		out, ok := x.Get("outputSchema")
		if !ok {
			return x
		}
		return append(Object(nil), x...).Insert("outputSchema", rewrite(out, narrowReal))
	})
}

// narrowReal is x with a Real's widened anyOf replaced by its "type".
func narrowReal(x Object) Object {
	return x.replaceAnyOf(func(first, second Object) (Member, bool) {
		e, ok := second.Get("enum")
		if !ok || len(second) != 1 || fmt.Sprint(e) != "[NaN Infinity -Infinity]" || len(first) != 1 || first[0].Key != "type" {
			return Member{}, false
		}
		return first[0], true
	})
}

// CollapseRefs maps nexus's $defs/$ref for a recursive record back to
// morloc's {"type":"object"} ({"type":["object","null"]} when optional)
// and drops "$defs".
func CollapseRefs(v any) any {
	return rewrite(v, func(x Object) Object {
		if _, ok := x.Get("$ref"); ok && len(x) == 1 {
			return Object{{"type", "object"}}
		}
		return x.without("$defs").replaceAnyOf(func(first, second Object) (Member, bool) {
			_, isRef := first.Get("$ref")
			return Member{"type", []any{"object", "null"}}, isRef && len(second) == 1 && second[0].Key == "type" && second[0].Value == "null"
		})
	})
}

// MorlocView is a document of nexus's tools with the differences above
// mapped back: NarrowReals, UnboundInts, CollapseRefs.
func MorlocView(v any) any { return CollapseRefs(UnboundInts(NarrowReals(v))) }

// rewrite is v with f applied to each of its objects, outermost first:
// f sees an object before its members are rewritten.
func rewrite(v any, f func(Object) Object) any {
	switch x := v.(type) {
	case Object:
		y := f(x)
		out := make(Object, len(y))
		for i, m := range y {
			out[i] = Member{m.Key, rewrite(m.Value, f)}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rewrite(e, f)
		}
		return out
	}
	return v
}

// without is o less the members named keys.
func (o Object) without(keys ...string) Object {
	out := Object{}
	for _, m := range o {
		if !slices.Contains(keys, m.Key) {
			out = append(out, m)
		}
	}
	return out
}

// replaceAnyOf replaces o's "anyOf" of two objects with the member by
// gives, when it says so.
func (o Object) replaceAnyOf(by func(first, second Object) (Member, bool)) Object {
	out := Object{}
	for _, m := range o {
		if alts, _ := m.Value.([]any); m.Key == "anyOf" && len(alts) == 2 {
			first, _ := alts[0].(Object)
			second, _ := alts[1].(Object)
			if r, ok := by(first, second); ok {
				out = append(out, r)
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// PathArguments reads each command's `source: file` arguments from a
// manifest.json's bytes, as morloc's manifest reader sees them: by the
// property of its tool each one is (a positional's name or _N, an option's
// long or short name, the key of an unrolled group's entry), with its
// format hint ("" for none).
func PathArguments(manifestJSON []byte) (map[string]map[string]string, error) {
	var m refManifest
	if err := json.Unmarshal(manifestJSON, &m); err != nil {
		return nil, err
	}
	isFile := func(a *refArg) bool {
		var source string
		return json.Unmarshal(a.Source, &source) == nil && source == "file"
	}
	format := func(a *refArg) string {
		if a.Format == nil {
			return ""
		}
		return *a.Format
	}
	out := map[string]map[string]string{}
	for _, c := range m.Commands {
		props := map[string]string{}
		pos := 0
		for i := range c.Args {
			a := &c.Args[i]
			switch a.Kind {
			case "pos":
				pos++
				if isFile(a) {
					name := fmt.Sprintf("_%d", pos)
					if a.Name != nil && *a.Name != "" {
						name = *a.Name
					}
					props[name] = format(a)
				}
			case "opt":
				if isFile(a) {
					props[refOptName(a.Long, a.Short)] = format(a)
				}
			case "grp":
				if g := strings.TrimSpace(string(a.GroupOpt)); g != "" && g != "null" {
					break
				}
				for k := range a.Entries {
					if e := &a.Entries[k].Arg; e.Kind == "opt" && isFile(e) {
						props[a.Entries[k].Key] = format(e)
					}
				}
			}
		}
		out[c.Name] = props
	}
	return out, nil
}

// UnpathProperty maps one `source: file` argument's property back to
// morloc's when it is exactly nexus's path form: surface (the path's
// schema), then a description that is PathSentence(format), alone or
// after morloc's text. The result is value
// (the schema of the file's content, as morloc writes it) with morloc's
// description; ok is false for a property in any other form, which is left
// for the comparison to show.
func UnpathProperty(prop Object, surface, value Object, format string) (Object, bool) {
	if len(prop) == 0 || prop[len(prop)-1].Key != "description" || !reflect.DeepEqual(prop[:len(prop)-1], surface) {
		return nil, false
	}
	text, _ := prop[len(prop)-1].Value.(string)
	sentence := PathSentence(format)
	out := append(Object(nil), value...)
	switch {
	case text == sentence:
	case strings.HasSuffix(text, " "+sentence):
		out = append(out, Member{"description", strings.TrimSuffix(text, " "+sentence)})
	default:
		return nil, false
	}
	return out, true
}

// WithoutTools is a --mcp-tools document less the tools named in names,
// which nexus leaves out on purpose, and the names it does not hold:
// morloc leaves those out too, for its own reason, which nexus's note must
// then give.
func WithoutTools(doc any, names map[string]bool) (kept any, notServed []string) {
	tools, _ := doc.(Object).Get("tools")
	rest := []any{}
	seen := map[string]bool{}
	for _, tl := range tools.([]any) {
		name, _ := tl.(Object).Get("name")
		if n, _ := name.(string); names[n] {
			seen[n] = true
			continue
		}
		rest = append(rest, tl)
	}
	for n := range names {
		if !seen[n] {
			notServed = append(notServed, n)
		}
	}
	sort.Strings(notServed)
	return Object{{"tools", rest}}, notServed
}
