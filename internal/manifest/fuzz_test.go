package manifest

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseType: whatever the type string, ParseType never panics; it
// either refuses it with a *TypeError pointing inside the string, or returns
// a type whose String parses back to the same type.
func FuzzParseType(f *testing.F) {
	for _, s := range []string{
		"z", "b", "s", "j", "i1", "u8", "f4", "f8", "F", "I", "O", "aj", "?j", "aaf8", "t2sj", "t0",
		"m24names3agej", "<dict>m36tmpDirsanumThreadsjcremoveCachesb", "<dict>at2sj",
		"<std::map<$1,std::vector<$2>>>at2sj", "m11x<list>ai4", "T", "T:21xj1yf8",
		"&4Treem25valuej8childrena^4Tree", "am22ids1m<dict>at2s?f8", "t3bzs", "^4Tree", "<a><b>j",
		"*", "<o>*", "a*", "a:2a:3j", "a:0j", "a:12?s", "m11va:2f8", "&4Listt2j?^4List", "&1Aa:2^1A",
		"t+" + strings.Repeat("j", 62), "m1/" + strings.Repeat("k", 63) + "s", "&1Am11b&1Bt2a^1Aa^1B",
		"", "x", "i3", "m1", "<dict", "&1Xa^1Y", "taaaaaaaaaa", "&1A?^1A", "a:", "a:j", "a:99999999999j", "t/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ty, err := ParseType(s)
		if err != nil {
			var te *TypeError
			if !errors.As(err, &te) {
				t.Fatalf("ParseType(%q): %v (%T), want a *TypeError", s, err, err)
			}
			if te.Offset < 0 || te.Offset > len(s) || te.Schema != s {
				t.Fatalf("ParseType(%q): error at offset %d of %q", s, te.Offset, te.Schema)
			}
			return
		}
		again, err := ParseType(ty.String())
		if err != nil {
			t.Fatalf("ParseType(%q) = %q, which does not parse: %v", s, ty.String(), err)
		}
		if !reflect.DeepEqual(normal(ty), normal(again)) {
			t.Fatalf("ParseType(%q) = %q, which parses to %q: not the same type", s, ty.String(), again.String())
		}
	})
}

// normal makes empty member lists nil, so that "T:0" (a table declared with
// no columns) and "T" (its encoding) compare equal.
func normal(t *Type) *Type {
	if t == nil {
		return nil
	}
	c := *t
	c.Elem = normal(t.Elem)
	c.Items = nil
	for _, it := range t.Items {
		c.Items = append(c.Items, normal(it))
	}
	c.Fields = nil
	for _, f := range t.Fields {
		c.Fields = append(c.Fields, Field{Key: f.Key, Type: normal(f.Type)})
	}
	return &c
}

// FuzzParse: whatever the bytes, a manifest file or a launcher embedding
// one (version 1 or later), Parse never panics, and refuses what it cannot
// read with an *Error naming the file.
func FuzzParse(f *testing.F) {
	f.Add([]byte(baseManifest))
	f.Add([]byte(v1Launcher(v1Base)))
	f.Add([]byte(v1Launcher(baseManifest)))
	f.Add([]byte(minimalManifest))
	for _, p := range []string{"v0.69-py/nexus", "v0.69-cross/nexus", "written-v0.96-py/nexus"} {
		data, err := os.ReadFile(launcherFixture(p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse("/fuzz/prog", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.File != "/fuzz/prog" {
				t.Fatalf("Parse: %v (%T), want an *Error naming the file", err, err)
			}
			return
		}
		if m.Name == "" || m.Path != "/fuzz/prog" || m.Dir == "" {
			t.Fatalf("loaded name %q path %q dir %q", m.Name, m.Path, m.Dir)
		}
		for _, p := range m.Pools {
			if p.Runtime != RuntimeNexus && p.Runtime != RuntimeMorloc {
				t.Fatalf("pool %s has runtime %q", p.Lang, p.Runtime)
			}
		}
	})
}
