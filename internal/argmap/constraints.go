package argmap

import (
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// Constraints (manifest Constraint): morloc's compiler writes only "kind"
// (record, object or table) on named types, which a schema already says
// by its type; lib.rs reserves min, max, length, non_empty, regex, enum,
// unique, row_count and sorted. nexus keeps every other constraint and
// shows it where a person or an agent reads about the command: in the
// tool's description (the argument's, the command's for its own and its
// return's) and in CLI help. It does not enforce them, as morloc does not.

// shownConstraints renders the constraints worth showing: all but "kind".
func shownConstraints(cs []manifest.Constraint) string {
	var parts []string
	for _, c := range cs {
		if c.Type != "kind" {
			parts = append(parts, c.String())
		}
	}
	return strings.Join(parts, "; ")
}

// withConstraints appends an argument's constraints to its description.
func withConstraints(text string, cs []manifest.Constraint) string {
	s := shownConstraints(cs)
	if s == "" {
		return text
	}
	note := "(constraints: " + s + ")"
	if text == "" {
		return note
	}
	return text + " " + note
}

// commandConstraints is the lines a command's description and help gain
// for its own constraints and its return's; none when it has neither.
func commandConstraints(c *manifest.Command) []string {
	var lines []string
	if s := shownConstraints(c.Constraints); s != "" {
		lines = append(lines, "Constraints: "+s)
	}
	if s := shownConstraints(c.Return.Constraints); s != "" {
		lines = append(lines, "Return constraints: "+s)
	}
	return lines
}
