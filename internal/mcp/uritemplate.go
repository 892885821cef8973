package mcp

import (
	"net/url"
	"strings"
)

// matchTemplate matches uri against a level 1 URI template (RFC 6570: its
// parts alternate literal text and variable names, as
// manifest.ParseURITemplate splits it) and returns each variable's value,
// percent-decoded. Simple string expansion percent-encodes every reserved
// character of a value, so a value holds no '/', '?' or '#': a variable
// ends where the literal after it begins, and is never empty.
func matchTemplate(parts []string, uri string) (map[string]string, bool) {
	rest, ok := strings.CutPrefix(uri, parts[0])
	if !ok {
		return nil, false
	}
	vals := map[string]string{}
	for i := 1; i+1 < len(parts); i += 2 {
		name, lit := parts[i], parts[i+1]
		var raw string
		last := i+2 >= len(parts)
		switch {
		case last && lit == "":
			raw, rest = rest, ""
		case last:
			if !strings.HasSuffix(rest, lit) {
				return nil, false
			}
			raw, rest = rest[:len(rest)-len(lit)], ""
		default:
			j := strings.Index(rest, lit)
			if j < 0 {
				return nil, false
			}
			raw, rest = rest[:j], rest[j+len(lit):]
		}
		if raw == "" || strings.ContainsAny(raw, "/?#") {
			return nil, false
		}
		v, err := url.PathUnescape(raw)
		if err != nil {
			return nil, false
		}
		vals[name] = v
	}
	if len(parts) == 1 {
		return vals, rest == ""
	}
	return vals, rest == ""
}
