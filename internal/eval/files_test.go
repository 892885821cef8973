package eval

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	opts := &Options{Dir: dir}
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("text.txt", []byte("hello world\n"))
	write("quoted.txt", []byte(`"quoted"`))
	write("inf.txt", []byte("inf\n"))
	write("empty.dat", nil)
	write("packet.dat", append([]byte{0x6d, 0xf8, 0x07, 0x07}, make([]byte, 40)...))
	write("pair.mpk", []byte{0x92, 0x01, 0xa1, 0x61})
	write("pair.dat", []byte{0x92, 0x01, 0xa1, 0x61})
	write("pair.json", []byte(`[1,"a"]`))
	write("bad.json", []byte(`[1,2]`))

	z := lit("z", "0")
	do := func(first, then string, schema string) string { return let(schema, "_do", first, then) }
	rec := cont("m21xs1yf8", str("a/b"), lit("f8", "0.30000000000000004"))
	type fileCase struct {
		evalCase
		file string // a file the expression writes
		data string // its expected content (hex for msgpack)
	}
	for _, c := range []fileCase{
		{evalCase: evalCase{name: "savej writes morloc's JSON", expr: save("json", jl(0), rec, str("rec.json")), ret: "z", want: "null"}, file: "rec.json", data: `{"x":"a\/b","y":0.3}`},
		{evalCase: evalCase{name: "savem pair", expr: save("msgpack", jl(0), cont("t2js", jl(1), str("a")), str("p.mpk")), ret: "z", want: "null"}, file: "p.mpk", data: "9201a161"},
		{evalCase: evalCase{name: "savem ints", expr: save("msgpack", jl(0), cont("aj", jl(-1), jl(-33), jl(300), jl(-200), lit("j", "4294967296"), lit("j", "18446744073709551616")), str("i.mpk")), ret: "z", want: "null"}, file: "i.mpk",
			data: "96" + "ff" + "d0df" + "cd012c" + "d1ff38" + "cf0000000100000000" + "c410" + "00000000000000000100000000000000"},
		{evalCase: evalCase{name: "savem real, str, optional, record", expr: save("msgpack", jl(0), cont("t4f8s?jm11aj", lit("f8", "1.5"), str(strings.Repeat("x", 40)), cont("?j"), cont("m11aj", jl(2))), str("r.mpk")), ret: "z", want: "null"}, file: "r.mpk",
			data: "94" + "cb3ff8000000000000" + "d928" + hex.EncodeToString([]byte(strings.Repeat("x", 40))) + "c0" + "9102"},
		{evalCase: evalCase{name: "json round trip", expr: do(save("json", jl(0), rec, str("r.json")), load("m21xs1yf8", str("r.json")), "m21xs1yf8"), ret: "m21xs1yf8", want: `{"x":"a/b","y":0.3}`}},
		{evalCase: evalCase{name: "msgpack round trip", expr: do(save("msgpack", jl(0), cont("t3jsb", lit("j", "-18446744073709551617"), str("é"), lit("b", "1")), str("rt.bin")), load("t3jsb", str("rt.bin")), "t3jsb"), ret: "t3jsb", want: `[-18446744073709551617,"é",true]`}},
		{evalCase: evalCase{name: "load msgpack by name", expr: load("t2js", str("pair.mpk")), ret: "t2js", want: `[1,"a"]`}},
		{evalCase: evalCase{name: "load msgpack by content", expr: load("t2js", str("pair.dat")), ret: "t2js", want: `[1,"a"]`}},
		{evalCase: evalCase{name: "load json", expr: load("t2js", str("pair.json")), ret: "t2js", want: `[1,"a"]`}},
		{evalCase: evalCase{name: "load bare text", expr: load("s", str("text.txt")), ret: "s", want: `"hello world"`}},
		{evalCase: evalCase{name: "load bare text optional", expr: load("?s", str("text.txt")), ret: "?s", want: `"hello world"`}},
		{evalCase: evalCase{name: "load quoted text", expr: load("s", str("quoted.txt")), ret: "s", want: `"quoted"`}},
		{evalCase: evalCase{name: "load bare inf", expr: show(load("f8", str("inf.txt"))), ret: "s", want: `"\"inf\""`}},
		{evalCase: evalCase{name: "load absolute path", expr: load("s", str(filepath.Join(dir, "text.txt"))), ret: "s", want: `"hello world"`}},
		{evalCase: evalCase{name: "load missing", expr: load("j", str("nope.dat")), ret: "j", err: "@load: failed to load 'nope.dat'", kind: Thrown}},
		{evalCase: evalCase{name: "load missing caught", expr: catchE(load("j", str("nope.dat")), jl(-1)), ret: "j", want: "-1"}},
		{evalCase: evalCase{name: "load tiered", expr: catchE(load("j", str("a")), catchE(load("j", str("b")), jl(999))), ret: "j", want: "999"}},
		{evalCase: evalCase{name: "load empty", expr: load("j", str("empty.dat")), ret: "j", err: "Cannot parse 0-length data", kind: Thrown}},
		{evalCase: evalCase{name: "load mismatch caught", expr: catchE(load("t2js", str("bad.json")), cont("t2js", jl(0), str("err"))), ret: "t2js", want: `[0,"err"]`}},
		{evalCase: evalCase{name: "load a directory", expr: load("j", str(".")), ret: "j", err: "failed to load '.'", kind: Thrown}},
		{evalCase: evalCase{name: "load voidstar refused", expr: catchE(load("j", str("packet.dat")), jl(0)), ret: "j", err: "is a morloc binary packet (voidstar), which nexus does not read", kind: Unsupported}},
		{evalCase: evalCase{name: "save level", expr: catchE(save("json", jl(10), jl(1), str("x")), z), ret: "z", err: "@save compression level must be in 0..=9, got 10", kind: Internal}},
		{evalCase: evalCase{name: "save voidstar refused", expr: save("voidstar", jl(0), jl(1), str("x")), ret: "z", err: "morloc's binary voidstar format is not supported", kind: Unsupported}},
		{evalCase: evalCase{name: "save failure caught", expr: catchE(save("json", jl(0), jl(1), str("no/such/dir/x")), lit("z", "0")), ret: "z", want: "null"}},
		{evalCase: evalCase{name: "save failure", expr: save("json", jl(0), jl(1), str("no/such/dir/x")), ret: "z", err: "@save(json): failed to write 'no/such/dir/x'", kind: Thrown}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := runOpts(opts, c.expr, nil, c.ret)
			if c.err != "" {
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(e.Msg, c.err) || e.Kind != c.kind {
					t.Fatalf("got %s, %v; want %s error %q", got, err, c.kind, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %s, %v; want %s", got, err, c.want)
			}
			if c.file != "" {
				data, err := os.ReadFile(filepath.Join(dir, c.file))
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(c.file, ".mpk") {
					data = []byte(hex.EncodeToString(data))
				}
				if string(data) != c.data {
					t.Fatalf("file %s = %s, want %s", c.file, data, c.data)
				}
			}
		})
	}
	// Atomic writes leave no temporary files behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("left %s behind", e.Name())
		}
	}
}

func TestLoadRespectsMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(strings.Repeat("x", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runOpts(&Options{Dir: dir, Limits: Limits{Bytes: 1 << 16}}, catchE(load("s", str("big.txt")), str("")), nil, "s")
	var e *Error
	if !errors.As(err, &e) || e.Kind != Limit {
		t.Fatalf("got %v, want a memory limit error", err)
	}
}

func TestRunConcurrently(t *testing.T) {
	p, err := Compile(json.RawMessage(lam(cont("t2jj", bound("j", "x"), bound("j", "x")), "x")), []Param{{Schema: "j"}}, "t2jj", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for i := 0; i < 8; i++ {
		go func() {
			for k := 0; k < 200; k++ {
				out, err := p.Run(context.Background(), []json.RawMessage{json.RawMessage("3")})
				if err == nil && string(out) != "[3,3]" {
					err = errors.New(string(out))
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
