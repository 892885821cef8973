package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// key returns a record key of n characters, so tests can reach every
// base-62 length digit.
func key(n int) string { return strings.Repeat("k", n) }

func TestParseTypeCodes(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		check  func(t *testing.T, ty *Type)
	}{
		{"nil", "z", isPrim(Nil, "z")},
		{"bool", "b", isPrim(Bool, "b")},
		{"string", "s", isPrim(Str, "s")},
		{"integer", "j", isPrim(Int, "j")},
		{"i1", "i1", isPrim(Int, "i1")},
		{"i2", "i2", isPrim(Int, "i2")},
		{"i4", "i4", isPrim(Int, "i4")},
		{"i8", "i8", isPrim(Int, "i8")},
		{"u1", "u1", isPrim(Int, "u1")},
		{"u2", "u2", isPrim(Int, "u2")},
		{"u4", "u4", isPrim(Int, "u4")},
		{"u8", "u8", isPrim(Int, "u8")},
		{"f4", "f4", isPrim(Float, "f4")},
		{"f8", "f8", isPrim(Float, "f8")},
		{"file", "F", isPrim(File, "F")},
		{"input stream", "I", isPrim(InStream, "I")},
		{"output stream", "O", isPrim(OutStream, "O")},
		{"list of int", "aj", func(t *testing.T, ty *Type) {
			wantKind(t, ty, List)
			wantKind(t, ty.Elem, Int)
		}},
		{"list of list of real", "aaf8", func(t *testing.T, ty *Type) {
			wantKind(t, ty.Elem, List)
			wantKind(t, ty.Elem.Elem, Float)
		}},
		{"optional int", "?j", func(t *testing.T, ty *Type) {
			wantKind(t, ty, Optional)
			wantKind(t, ty.Elem, Int)
		}},
		{"tuple of two", "t2sj", func(t *testing.T, ty *Type) {
			wantKind(t, ty, Tuple)
			if len(ty.Items) != 2 || ty.Items[0].Kind != Str || ty.Items[1].Kind != Int {
				t.Fatalf("items = %v, want [string integer]", kinds(ty.Items))
			}
		}},
		{"empty tuple", "t0", func(t *testing.T, ty *Type) {
			wantKind(t, ty, Tuple)
			if len(ty.Items) != 0 {
				t.Fatalf("items = %v, want none", kinds(ty.Items))
			}
		}},
		{"tuple of ten (count 'a')", "ta" + strings.Repeat("b", 10), func(t *testing.T, ty *Type) {
			if len(ty.Items) != 10 {
				t.Fatalf("got %d items, want 10", len(ty.Items))
			}
		}},
		{"record", "m24names3agej", func(t *testing.T, ty *Type) {
			wantKind(t, ty, Record)
			wantFields(t, ty, "name:string", "age:integer")
		}},
		{"record with key of length 10 ('a')", "m1anumThreadsj", func(t *testing.T, ty *Type) {
			wantFields(t, ty, "numThreads:integer")
		}},
		{"record with key of length 35 ('z')", "m1z" + key(35) + "s", func(t *testing.T, ty *Type) {
			wantFields(t, ty, key(35)+":string")
		}},
		{"record with key of length 36 ('A')", "m1A" + key(36) + "b", func(t *testing.T, ty *Type) {
			wantFields(t, ty, key(36)+":bool")
		}},
		{"record with key of length 61 ('Z')", "m1Z" + key(61) + "j", func(t *testing.T, ty *Type) {
			wantFields(t, ty, key(61)+":integer")
		}},
		{"spec's SysConfig with dict hint", "<dict>m36tmpDirsanumThreadsjcremoveCachesb", func(t *testing.T, ty *Type) {
			wantKind(t, ty, Record)
			if ty.Hint != "dict" {
				t.Errorf("hint = %q, want dict", ty.Hint)
			}
			wantFields(t, ty, "tmpDir:string", "numThreads:integer", "removeCaches:bool")
			if !ty.IsRecord() {
				t.Error("IsRecord() = false, want true")
			}
		}},
		{"map str int", "<dict>at2sj", func(t *testing.T, ty *Type) {
			wantKind(t, ty, List)
			if ty.Hint != "dict" || !ty.IsMap() {
				t.Errorf("hint = %q, IsMap() = %v; want dict, true", ty.Hint, ty.IsMap())
			}
			wantKind(t, ty.Elem, Tuple)
		}},
		{"nested C++ hint", "<std::map<$1,std::vector<$2>>>at2sj", func(t *testing.T, ty *Type) {
			if ty.Hint != "std::map<$1,std::vector<$2>>" {
				t.Errorf("hint = %q", ty.Hint)
			}
			if !ty.IsMap() {
				t.Error("IsMap() = false, want true")
			}
		}},
		{"hint on a field", "m11x<list>ai4", func(t *testing.T, ty *Type) {
			f := ty.Fields[0].Type
			wantKind(t, f, List)
			if f.Hint != "list" || ty.Hint != "" {
				t.Errorf("field hint = %q, record hint = %q; want list, empty", f.Hint, ty.Hint)
			}
		}},
		{"plain table", "T", func(t *testing.T, ty *Type) {
			wantKind(t, ty, Table)
			if len(ty.Fields) != 0 {
				t.Errorf("columns = %d, want 0", len(ty.Fields))
			}
		}},
		{"table with columns", "T:21xj1yf8", func(t *testing.T, ty *Type) {
			wantKind(t, ty, Table)
			wantFields(t, ty, "x:integer", "y:real")
		}},
		{"any", "*", isPrim(Any, "*")},
		{"hinted any", "<object>*", func(t *testing.T, ty *Type) {
			wantKind(t, ty, Any)
			if ty.Hint != "object" {
				t.Errorf("hint = %q, want object", ty.Hint)
			}
		}},
		{"list of any", "a*", func(t *testing.T, ty *Type) { wantKind(t, ty.Elem, Any) }},
		{"fixed-length list", "a:3j", func(t *testing.T, ty *Type) {
			wantKind(t, ty, List)
			if ty.Len != 3 {
				t.Errorf("Len = %d, want 3", ty.Len)
			}
		}},
		{"matrix 2 3 int", "a:2a:3j", func(t *testing.T, ty *Type) {
			if ty.Len != 2 || ty.Elem.Len != 3 || ty.Elem.Elem.Kind != Int {
				t.Fatalf("got %s (%d) of %s (%d)", ty.Kind, ty.Len, ty.Elem.Kind, ty.Elem.Len)
			}
		}},
		{"fixed length of many digits", "a:1234567?s", func(t *testing.T, ty *Type) {
			if ty.Len != 1234567 {
				t.Errorf("Len = %d, want 1234567", ty.Len)
			}
		}},
		{"largest fixed length", "a:2147483648b", func(t *testing.T, ty *Type) {
			if ty.Len != MaxLen {
				t.Errorf("Len = %d, want %d", ty.Len, MaxLen)
			}
		}},
		{"fixed list inside a record", "m11va:2f8", func(t *testing.T, ty *Type) {
			if ty.Fields[0].Type.Len != 2 {
				t.Errorf("Len = %d, want 2", ty.Fields[0].Type.Len)
			}
		}},
		{"hinted fixed list", "<list>a:4i1", func(t *testing.T, ty *Type) {
			if ty.Hint != "list" || ty.Len != 4 {
				t.Errorf("hint %q, Len %d; want list, 4", ty.Hint, ty.Len)
			}
		}},
		{"tuple of 62 ('+')", "t+" + strings.Repeat("j", 62), func(t *testing.T, ty *Type) {
			if len(ty.Items) != 62 {
				t.Fatalf("got %d items, want 62", len(ty.Items))
			}
		}},
		{"tuple of 63 ('/')", "t/" + strings.Repeat("b", 63), func(t *testing.T, ty *Type) {
			if len(ty.Items) != 63 {
				t.Fatalf("got %d items, want 63", len(ty.Items))
			}
		}},
		{"record with key of length 62 ('+')", "m1+" + key(62) + "j", func(t *testing.T, ty *Type) {
			wantFields(t, ty, key(62)+":integer")
		}},
		{"record with key of length 63 ('/')", "m1/" + key(63) + "s", func(t *testing.T, ty *Type) {
			wantFields(t, ty, key(63)+":string")
		}},
		{"record with 63 fields ('/')", fields(63), func(t *testing.T, ty *Type) {
			if len(ty.Fields) != 63 || ty.Fields[62].Key != "f62" {
				t.Fatalf("got %d fields", len(ty.Fields))
			}
		}},
		{"recursive name of length 62", "&+" + key(62) + "a^+" + key(62), func(t *testing.T, ty *Type) {
			wantKind(t, ty, Recursive)
			if ty.Name != key(62) || ty.Elem.Elem.Name != key(62) {
				t.Errorf("names %q, %q", ty.Name, ty.Elem.Elem.Name)
			}
		}},
		{"recursive list through a tuple", "&4Listt2j?^4List", func(t *testing.T, ty *Type) {
			wantKind(t, ty.Unwrap(), Tuple)
			wantKind(t, ty.Unwrap().Items[1].Elem, BackRef)
		}},
		{"recursive declaration before a hint", "&4Tree<dict>m14kidsa^4Tree", func(t *testing.T, ty *Type) {
			wantKind(t, ty, Recursive)
			if ty.Elem.Hint != "dict" {
				t.Errorf("body hint = %q, want dict", ty.Elem.Hint)
			}
		}},
		{"two recursive declarations", "&1Am21ba^1A1c&1Bm11da^1B", func(t *testing.T, ty *Type) {
			wantKind(t, ty.Unwrap().Fields[1].Type, Recursive)
		}},
		{"back-reference to an outer declaration", "&1Am11b&1Bt2a^1Aa^1B", func(t *testing.T, ty *Type) {
			inner := ty.Unwrap().Fields[0].Type
			if inner.Name != "B" || inner.Unwrap().Items[0].Elem.Name != "A" {
				t.Errorf("got %s", ty)
			}
		}},
		{"a fixed list guards recursion", "&1Aa:2^1A", func(t *testing.T, ty *Type) { wantKind(t, ty.Elem.Elem, BackRef) }},
		{"a table guards recursion", "&1AT:11x^1A", func(t *testing.T, ty *Type) { wantKind(t, ty.Elem, Table) }},
		{"recursive type with back-reference", "&4Treem25valuej8childrena^4Tree", func(t *testing.T, ty *Type) {
			wantKind(t, ty, Recursive)
			if ty.Name != "Tree" {
				t.Errorf("name = %q, want Tree", ty.Name)
			}
			body := ty.Unwrap()
			wantKind(t, body, Record)
			ref := body.Fields[1].Type.Elem
			wantKind(t, ref, BackRef)
			if ref.Name != "Tree" {
				t.Errorf("back-reference name = %q, want Tree", ref.Name)
			}
			if !ty.IsRecord() {
				t.Error("IsRecord() through a recursive declaration = false, want true")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ty, err := ParseType(tc.schema)
			if err != nil {
				t.Fatalf("ParseType(%q): %v", tc.schema, err)
			}
			tc.check(t, ty)
			if got := ty.String(); got != tc.schema {
				t.Errorf("ParseType(%q).String() = %q, want the input back", tc.schema, got)
			}
		})
	}
}

// fields is a record type string of n integer fields f0, f1, ...
func fields(n int) string {
	s := "m" + string(sizeDigits[n])
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("f%d", i)
		s += string(sizeDigits[len(k)]) + k + "j"
	}
	return s
}

// `a:0` is "any length" in morloc's runtime: the type `aj`, and leading
// zeros are not kept.
func TestParseTypeFixedLengthForms(t *testing.T) {
	for schema, want := range map[string]string{"a:0j": "aj", "a:007j": "a:7j", "a:0a:03s": "aa:3s"} {
		ty, err := ParseType(schema)
		if err != nil {
			t.Fatalf("ParseType(%q): %v", schema, err)
		}
		if got := ty.String(); got != want {
			t.Errorf("ParseType(%q).String() = %q, want %q", schema, got, want)
		}
	}
}

// Stacked hints carry no meaning nexus uses; the last one (nearest the type)
// is kept, so they re-encode as that one hint.
func TestParseTypeStackedHints(t *testing.T) {
	ty, err := ParseType("<outer><inner>j")
	if err != nil {
		t.Fatal(err)
	}
	if ty.Kind != Int || ty.Hint != "inner" {
		t.Fatalf("got %s with hint %q, want integer with hint inner", ty.Kind, ty.Hint)
	}
	if got := ty.String(); got != "<inner>j" {
		t.Fatalf("String() = %q, want <inner>j", got)
	}
}

func TestParseTypeErrors(t *testing.T) {
	deep := strings.Repeat("a", maxTypeDepth+1) + "j"
	tests := []struct {
		name   string
		schema string
		offset int
		msg    string
	}{
		{"empty", "", 0, "expected a type code, got end of string"},
		{"unknown code", "x", 0, `unknown type code 'x'`},
		{"unknown code inside a list", "ax", 1, `unknown type code 'x'`},
		{"integer width", "i3", 1, "expected a width 1, 2, 4 or 8 after 'i'"},
		{"unsigned width missing", "u", 1, "expected a width 1, 2, 4 or 8 after 'u'"},
		{"float width", "f2", 1, "expected a width 4 or 8 after 'f'"},
		{"list without element", "a", 1, "expected a type code, got end of string"},
		{"optional without element", "?", 1, "expected a type code, got end of string"},
		{"truncated record: no count", "m", 1, "expected a base-62 record field count, got end of string"},
		{"truncated record: missing field", "m21xj", 5, "expected a base-62 record field key length, got end of string"},
		{"truncated record: no field type", "m11x", 4, "expected a type code, got end of string"},
		{"record count not base-62", "m-", 1, `expected a base-62 record field count (0-9, a-z, A-Z, + or /), got '-'`},
		{"key runs past the end", "m19abc", 3, "record field key of length 9 runs past the end of the string"},
		{"duplicate record key", "m21xj1xs", 5, `duplicate record field key "x"`},
		{"tuple count past the end", "t3jj", 4, "expected a type code, got end of string"},
		{"tuple without count", "t", 1, "expected a base-62 tuple size, got end of string"},
		{"table column count missing", "T:", 2, "expected a base-62 table column count, got end of string"},
		{"unterminated hint", "<dict", 0, "unterminated type hint: expected '>'"},
		{"unbalanced nested hint", "<std::map<$1>at2sj", 0, "unterminated type hint: expected '>'"},
		{"hint without type", "<dict>", 6, "expected a type code, got end of string"},
		{"back-reference without declaration", "m14nodea^4Node", 8, "back-reference ^Node has no enclosing &Node declaration"},
		{"back-reference to another name", "&4Treea^4Node", 7, "back-reference ^Node has no enclosing &Node declaration"},
		{"back-reference alone", "^4Tree", 0, "back-reference ^Tree has no enclosing &Tree declaration"},
		{"back-reference outside its declaration", "t2&1Aa^1A^1A", 9, "back-reference ^A has no enclosing &A declaration"},
		{"recursion with no constructor", "&1A^1A", 3, "back-reference ^A refers to &A with no list, tuple, record or table between them"},
		{"recursion through an optional only", "&1A?^1A", 4, "back-reference ^A refers to &A with no list, tuple, record or table between them"},
		{"recursion through another declaration only", "&1A&1B^1A", 6, "back-reference ^A refers to &A with no list, tuple, record or table between them"},
		{"inner declaration shadows the outer", "&1Aa&1A^1A", 7, "back-reference ^A refers to &A with no list"},
		{"fixed list without length", "a:j", 2, "expected the decimal length of a fixed-length list after 'a:'"},
		{"fixed list length at the end", "a:", 2, "expected the decimal length of a fixed-length list after 'a:'"},
		{"fixed list without element", "a:3", 3, "expected a type code, got end of string"},
		{"fixed list length too large", "a:99999999999j", 2, "fixed list length 99999999999 is larger than 2147483648"},
		{"size character beyond '/'", "t-", 1, "expected a base-62 tuple size (0-9, a-z, A-Z, + or /), got '-'"},
		{"62 tuple items, one missing", "t+" + strings.Repeat("j", 61), 63, "expected a type code, got end of string"},
		{"star with a width", "*4", 1, `unexpected trailing "4" after a complete type`},
		{"back-reference name past the end", "&4Treea^9Tr", 9, "back-reference name of length 9 runs past the end of the string"},
		{"recursive name past the end", "&9Tree", 2, "recursive type name of length 9 runs past the end of the string"},
		{"trailing junk", "jj", 1, `unexpected trailing "j" after a complete type`},
		{"trailing junk after a record", "m11xjz", 5, `unexpected trailing "z" after a complete type`},
		{"deep nesting", deep, maxTypeDepth, "type nested deeper than 256 levels"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ty, err := ParseType(tc.schema)
			if err == nil {
				t.Fatalf("ParseType(%q) = %v, want an error", tc.schema, ty)
			}
			var te *TypeError
			if !errors.As(err, &te) {
				t.Fatalf("error %v is a %T, want *TypeError", err, err)
			}
			if te.Schema != tc.schema || te.Offset != tc.offset {
				t.Errorf("error at %q offset %d, want %q offset %d", te.Schema, te.Offset, tc.schema, tc.offset)
			}
			if !strings.Contains(te.Msg, tc.msg) {
				t.Errorf("message %q does not contain %q", te.Msg, tc.msg)
			}
			if !strings.Contains(err.Error(), "type string") {
				t.Errorf("Error() = %q, want it to name the type string", err.Error())
			}
		})
	}
}

func TestTypeHelpers(t *testing.T) {
	tests := []struct {
		schema   string
		isRecord bool
		isMap    bool
		handles  bool // Contains(Table, File, InStream, OutStream)
	}{
		{"j", false, false, false},
		{"m11xj", true, false, false},
		{"?m11xj", false, false, false},
		{"am11xj", false, false, false},
		{"<dict>at2sj", false, true, false},
		{"at2sj", false, false, false},        // pairs without a hint are a list of tuples
		{"<dict>at3sjj", false, false, false}, // not pairs
		{"<list>at2sj", false, false, false},  // pairs under a list hint stay a list
		{"<std::unordered_map<$1,$2>>at2jb", false, true, false},
		{"m11fF", true, false, true},
		{"at2jT:11xj", false, false, true},
		{"?I", false, false, true},
		{"&4Listm24headj4tail?^4List", true, false, false},
		{"*", false, false, false},
		{"a:2m11xj", false, false, false},
		{"<dict>a:2t2sj", false, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.schema, func(t *testing.T) {
			ty, err := ParseType(tc.schema)
			if err != nil {
				t.Fatal(err)
			}
			if got := ty.IsRecord(); got != tc.isRecord {
				t.Errorf("IsRecord() = %v, want %v", got, tc.isRecord)
			}
			if got := ty.IsMap(); got != tc.isMap {
				t.Errorf("IsMap() = %v, want %v", got, tc.isMap)
			}
			if got := ty.Contains(Table, File, InStream, OutStream); got != tc.handles {
				t.Errorf("Contains(table, handles) = %v, want %v", got, tc.handles)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	tests := map[Kind]string{Nil: "nil", Int: "integer", Float: "real", BackRef: "back-reference", Any: "any", Kind(99): "kind(99)"}
	for k, want := range tests {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

func isPrim(k Kind, code string) func(*testing.T, *Type) {
	return func(t *testing.T, ty *Type) {
		t.Helper()
		if ty.Kind != k || ty.Code != code {
			t.Fatalf("got %s %q, want %s %q", ty.Kind, ty.Code, k, code)
		}
	}
}

func wantKind(t *testing.T, ty *Type, k Kind) {
	t.Helper()
	if ty == nil {
		t.Fatalf("got no type, want %s", k)
	}
	if ty.Kind != k {
		t.Fatalf("got %s, want %s", ty.Kind, k)
	}
}

func wantFields(t *testing.T, ty *Type, want ...string) {
	t.Helper()
	var got []string
	for _, f := range ty.Fields {
		got = append(got, f.Key+":"+f.Type.Kind.String())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("fields = %v, want %v", got, want)
	}
}

func kinds(ts []*Type) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Kind.String())
	}
	return out
}
