package clientconfig

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// Codex keeps its servers in TOML, as [mcp_servers.NAME] tables. As with
// JSON, the file is edited as text: a server is appended as its own tables
// and removed by deleting its tables' lines. BurntSushi/toml only reads the
// file, before (a file that does not parse is left alone) and after: the
// edited text must decode to exactly the original data with the one server
// added or removed, or nothing is written. A server written in a form the
// line editor cannot cut out (an inline table, dotted keys) fails that
// check and is refused.

// tomlDoc is a parsed Codex config.
type tomlDoc struct {
	src  []byte
	data map[string]any
}

func parseTOMLDoc(src []byte) (*tomlDoc, error) {
	data := map[string]any{}
	if _, err := toml.NewDecoder(bytes.NewReader(src)).Decode(&data); err != nil {
		return nil, fmt.Errorf("not valid TOML: %v", err)
	}
	return &tomlDoc{src: src, data: data}, nil
}

// server is the decoded table of mcp_servers.NAME, nil when absent.
func (d *tomlDoc) server(name string) (map[string]any, error) {
	raw, ok := d.data["mcp_servers"]
	if !ok {
		return nil, nil
	}
	servers, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("mcp_servers is not a table")
	}
	s, ok := servers[name]
	if !ok {
		return nil, nil
	}
	t, ok := s.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("mcp_servers.%s is not a table", tomlKey(name))
	}
	return t, nil
}

// tomlEntry is an entry as Codex's decoded table would hold it.
func tomlEntry(e Entry) map[string]any {
	args := make([]any, len(e.Args))
	for i, a := range e.Args {
		args[i] = a
	}
	t := map[string]any{"command": e.Command, "args": args}
	if len(e.Env) > 0 {
		env := map[string]any{}
		for k, v := range e.Env {
			env[k] = v
		}
		t["env"] = env
	}
	return t
}

// tomlText is the entry as the tables nexus appends.
func tomlText(name string, e Entry) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "[mcp_servers.%s]\ncommand = %s\nargs = [", tomlKey(name), tomlString(e.Command))
	for i, a := range e.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tomlString(a))
	}
	b.WriteString("]\n")
	if len(e.Env) > 0 {
		fmt.Fprintf(&b, "\n[mcp_servers.%s.env]\n", tomlKey(name))
		for _, k := range sortedKeys(e.Env) {
			fmt.Fprintf(&b, "%s = %s\n", tomlKey(k), tomlString(e.Env[k]))
		}
	}
	return b.Bytes()
}

func tomlKey(k string) string {
	if isBareKey(k) {
		return k
	}
	return tomlString(k)
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// appendServer adds the server's tables at the end, after a blank line.
func (d *tomlDoc) appendServer(name string, e Entry) []byte {
	out := append([]byte{}, d.src...)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	if len(bytes.TrimSpace(out)) > 0 {
		out = append(out, '\n')
	}
	return append(out, tomlText(name, e)...)
}

// removeServer deletes the lines of every table whose name starts with
// mcp_servers.NAME (the server's own, its env, its tools...).
func (d *tomlDoc) removeServer(name string) ([]byte, error) {
	headers, err := tomlHeaders(d.src)
	if err != nil {
		return nil, err
	}
	var spans [][2]int
	for i, h := range headers {
		if !(len(h.key) >= 2 && h.key[0] == "mcp_servers" && h.key[1] == name) {
			continue
		}
		end := len(d.src)
		if i+1 < len(headers) {
			end = headers[i+1].start
		}
		if n := len(spans); n > 0 && spans[n-1][1] == h.start {
			spans[n-1][1] = end // the next table of the same server
		} else {
			spans = append(spans, [2]int{h.start, end})
		}
	}
	out := d.src
	for i := len(spans) - 1; i >= 0; i-- {
		from, to := spans[i][0], spans[i][1]
		if to == len(out) && from >= 2 && out[from-1] == '\n' && out[from-2] == '\n' && len(bytes.TrimSpace(out[:from])) > 0 {
			from-- // at the end of the file: the empty line appendServer put before it goes too
		}
		out = splice(out, from, to, nil)
	}
	return out, nil
}

// tomlHeader is a [table] or [[array]] header line: its start and its key.
type tomlHeader struct {
	start int
	key   []string
}

// tomlHeaders finds the table headers of a valid TOML document: lines whose
// first character is '[' outside any string or multi-line value.
func tomlHeaders(src []byte) ([]tomlHeader, error) {
	var out []tomlHeader
	depth := 0 // of [ and { in values
	lineStart := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '"' || c == '\'':
			i = skipTOMLString(src, i)
		case c == '[' && lineStart && depth == 0:
			start := bytes.LastIndexByte(src[:i], '\n') + 1
			end := bytes.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			key, err := tomlHeaderKey(string(src[i : i+end]))
			if err != nil {
				return nil, err
			}
			out = append(out, tomlHeader{start: start, key: key})
			i += end
			continue
		case c == '[' || c == '{':
			depth++
			i++
		case c == ']' || c == '}':
			depth--
			i++
		default:
			i++
		}
		lineStart = false
	}
	return out, nil
}

// skipTOMLString returns the index after the string starting at i.
func skipTOMLString(src []byte, i int) int {
	q := src[i]
	if bytes.HasPrefix(src[i:], []byte{q, q, q}) {
		end := bytes.Index(src[i+3:], []byte{q, q, q})
		if q == '"' {
			for end >= 0 && escaped(src, i+3+end) {
				next := bytes.Index(src[i+3+end+1:], []byte{q, q, q})
				if next < 0 {
					end = -1
					break
				}
				end += 1 + next
			}
		}
		if end < 0 {
			return len(src)
		}
		j := i + 3 + end + 3
		for j < len(src) && src[j] == q { // """a"""" ends with up to two quotes inside
			j++
		}
		return j
	}
	for j := i + 1; j < len(src); j++ {
		switch {
		case src[j] == '\\' && q == '"':
			j++
		case src[j] == q || src[j] == '\n':
			return j + 1
		}
	}
	return len(src)
}

// escaped reports whether the byte at i follows an odd number of backslashes.
func escaped(src []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && src[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// tomlHeaderKey parses "[a.b]" or "[[a.\"b c\"]]" (with a comment after)
// into its key parts.
func tomlHeaderKey(line string) ([]string, error) {
	s := strings.TrimLeft(line, "[")
	var parts []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil, fmt.Errorf("table header %q: unexpected end", line)
		}
		switch s[0] {
		case '"', '\'':
			end := skipTOMLString([]byte(s), 0)
			var v struct{ K string }
			if _, err := toml.Decode("K = "+s[:end], &v); err != nil {
				return nil, fmt.Errorf("table header %q: %v", line, err)
			}
			parts, s = append(parts, v.K), s[end:]
		default:
			end := strings.IndexAny(s, " \t.]")
			if end < 0 {
				return nil, fmt.Errorf("table header %q: unexpected end", line)
			}
			parts, s = append(parts, s[:end]), s[end:]
		}
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, "]") {
			return parts, nil
		}
		if !strings.HasPrefix(s, ".") {
			return nil, fmt.Errorf("table header %q: expected '.' or ']'", line)
		}
		s = s[1:]
	}
}

// checkTOMLEdit decodes the edited text and checks it holds the original
// data with mcp_servers.NAME set to want (nil: removed) and nothing else
// changed.
func (d *tomlDoc) checkEdit(out []byte, name string, want map[string]any) error {
	cannot := fmt.Errorf("mcp_servers.%s is written in a form nexus cannot edit (an inline table or dotted keys): edit it by hand", tomlKey(name))
	got := map[string]any{}
	if _, err := toml.NewDecoder(bytes.NewReader(out)).Decode(&got); err != nil {
		return fmt.Errorf("%w (the edit would not parse: %v)", cannot, err)
	}
	expect := map[string]any{}
	for k, v := range d.data {
		expect[k] = v
	}
	servers := map[string]any{}
	if s, ok := d.data["mcp_servers"].(map[string]any); ok {
		for k, v := range s {
			servers[k] = v
		}
	}
	delete(servers, name)
	if want != nil {
		servers[name] = want
	}
	expect["mcp_servers"] = servers
	for _, m := range []map[string]any{expect, got} {
		if s, ok := m["mcp_servers"].(map[string]any); ok && len(s) == 0 {
			delete(m, "mcp_servers")
		}
	}
	if !reflect.DeepEqual(expect, got) {
		return fmt.Errorf("%w (the edit would change other settings)", cannot)
	}
	return nil
}

// isBareKey reports whether k may stand unquoted as a TOML key:
// [A-Za-z0-9_-]+.
func isBareKey(k string) bool {
	for _, c := range []byte(k) {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return k != ""
}
