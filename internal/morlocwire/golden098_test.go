package morlocwire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// A fixture of testdata/v0.98: bytes written by hand from morloc 0.98.2's
// Rust source (testdata/v0.98/README.md says where each byte comes from).
type fixture struct {
	schema  string
	want    string // the JSON result
	fail    string // or the failure message
	packet  []byte
	volumes map[int][]byte
	file    []byte
	hasFile bool
	args    []fixtureArg
}

type fixtureArg struct {
	schema, value string
	packet        []byte
}

// parseFixture reads a .fix file: "key: value" lines (schema, want,
// fail), then sections "== packet", "== volume N", "== file" and
// "== arg SCHEMA JSON" of byte tokens: hex ("6d", "6df80707"), "u8:N"
// "u16:N" "u32:N" "u64:N" "i16:N" "i32:N" "i64:N" (little-endian; N
// decimal or 0x hex), "f64:X" (little-endian), "zeros:N", and quoted
// strings (Go syntax). '#' starts a comment.
func parseFixture(t *testing.T, path string) fixture {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{volumes: map[int][]byte{}}
	vols := map[int]*[]byte{}
	var cur *[]byte
	for n, line := range strings.Split(string(text), "\n") {
		fail := func(format string, a ...any) {
			t.Fatalf("%s:%d: %s", path, n+1, fmt.Sprintf(format, a...))
		}
		line = stripComment(line)
		if strings.TrimSpace(line) == "" {
			continue
		}
		if sec, ok := strings.CutPrefix(line, "== "); ok {
			switch fields := strings.Fields(sec); {
			case fields[0] == "packet":
				cur = &f.packet
			case fields[0] == "file":
				f.hasFile = true
				cur = &f.file
			case fields[0] == "volume" && len(fields) == 2:
				i, err := strconv.Atoi(fields[1])
				if err != nil {
					fail("volume %q", fields[1])
				}
				cur = new([]byte)
				vols[i] = cur
			case fields[0] == "arg" && len(fields) >= 3:
				f.args = append(f.args, fixtureArg{schema: fields[1], value: strings.Join(fields[2:], " ")})
				cur = &f.args[len(f.args)-1].packet
			default:
				fail("unknown section %q", sec)
			}
			continue
		}
		if cur == nil {
			key, val, ok := strings.Cut(line, ": ")
			if !ok {
				fail("expected key: value")
			}
			switch key {
			case "schema":
				f.schema = val
			case "want":
				f.want = val
			case "fail":
				s, err := strconv.Unquote(`"` + val + `"`)
				if err != nil {
					fail("fail: %v", err)
				}
				f.fail = s
			default:
				fail("unknown key %q", key)
			}
			continue
		}
		b, err := fixtureBytes(line)
		if err != nil {
			fail("%v", err)
		}
		*cur = append(*cur, b...)
	}
	for i, b := range vols {
		f.volumes[i] = *b
	}
	return f
}

func stripComment(line string) string {
	inQuote := false
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			if inQuote {
				i++
			}
		case '"':
			inQuote = !inQuote
		case '#':
			if !inQuote {
				return line[:i]
			}
		}
	}
	return line
}

func fixtureBytes(line string) ([]byte, error) {
	var out []byte
	for rest := strings.TrimSpace(line); rest != ""; rest = strings.TrimSpace(rest) {
		if rest[0] == '"' {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil, err
			}
			s, _ := strconv.Unquote(q)
			out = append(out, s...)
			rest = rest[len(q):]
			continue
		}
		tok, r, _ := strings.Cut(rest, " ")
		rest = r
		kind, num, typed := strings.Cut(tok, ":")
		if !typed {
			if len(tok)%2 != 0 {
				return nil, fmt.Errorf("odd hex %q", tok)
			}
			for i := 0; i < len(tok); i += 2 {
				v, err := strconv.ParseUint(tok[i:i+2], 16, 8)
				if err != nil {
					return nil, fmt.Errorf("hex %q", tok)
				}
				out = append(out, byte(v))
			}
			continue
		}
		if kind == "f64" {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return nil, err
			}
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
			continue
		}
		var u uint64
		if strings.HasPrefix(num, "-") {
			v, err := strconv.ParseInt(num, 0, 64)
			if err != nil {
				return nil, err
			}
			u = uint64(v)
		} else {
			v, err := strconv.ParseUint(num, 0, 64)
			if err != nil {
				return nil, err
			}
			u = v
		}
		switch kind {
		case "u8":
			out = append(out, byte(u))
		case "u16", "i16":
			out = binary.LittleEndian.AppendUint16(out, uint16(u))
		case "u32", "i32":
			out = binary.LittleEndian.AppendUint32(out, uint32(u))
		case "u64", "i64":
			out = binary.LittleEndian.AppendUint64(out, u)
		case "zeros":
			out = append(out, make([]byte, u)...)
		default:
			return nil, fmt.Errorf("token %q", tok)
		}
	}
	return out, nil
}

// TestGolden098 decodes each fixture derived from morloc 0.98.2's source
// in the Rust dialect, and encodes each of its arguments.
func TestGolden098(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "v0.98", "*.fix"))
	if err != nil || len(files) < 10 {
		t.Fatalf("fixtures: %v (%d files)", err, len(files))
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".fix"), func(t *testing.T) {
			f := parseFixture(t, path)
			for _, a := range f.args {
				at, err := manifest.ParseType(a.schema)
				if err != nil {
					t.Fatal(err)
				}
				got, err := AppendArg(nil, at, json.RawMessage(a.value), Rust)
				if err != nil {
					t.Errorf("arg %s %s: %v", a.schema, a.value, err)
				} else if !bytes.Equal(got, a.packet) {
					t.Errorf("arg %s %s\n got %x\nwant %x", a.schema, a.value, got, a.packet)
				}
			}
			if f.packet == nil {
				return
			}
			checkFixture(t, f)
		})
	}
}

func checkFixture(t *testing.T, f fixture) {
	t.Helper()
	p, err := ParsePacket(f.packet)
	if err != nil {
		t.Fatal(err) // the header's offset and length must add up to the bytes
	}
	st, err := manifest.ParseType(f.schema)
	if err != nil {
		t.Fatal(err)
	}
	if f.hasFile {
		file := filepath.Join(t.TempDir(), filepath.Base(string(p.Payload)))
		if err := os.WriteFile(file, f.file, 0o600); err != nil {
			t.Fatal(err)
		}
		p.Payload = []byte(file)
	}
	var mem *Memory
	if len(f.volumes) > 0 {
		dir := t.TempDir()
		basename := "morloc-fixture-" + filepath.Base(dir)
		for i, b := range f.volumes {
			if len(b) < Rust.ShmHeaderSize || binary.LittleEndian.Uint64(b[136:]) != uint64(len(b)-Rust.ShmHeaderSize) {
				t.Fatalf("volume %d: %d bytes, its header says %d data bytes after %d", i, len(b), binary.LittleEndian.Uint64(b[136:]), Rust.ShmHeaderSize)
			}
			if err := os.WriteFile(filepath.Join(dir, VolumeName(basename, i)), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		mem = OpenMemory(basename, dir, Rust)
		defer mem.Close()
	}
	got, err := p.Result(st, Rust, mem)
	if f.fail != "" {
		var fl *Failure
		if !errors.As(err, &fl) || fl.Message != f.fail {
			t.Fatalf("got %s, %v; want the failure %q", got, err, f.fail)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != f.want {
		t.Errorf("result\n got %s\nwant %s", got, f.want)
	}
}
