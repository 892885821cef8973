package argmap

import (
	"fmt"
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// metavarOf is the placeholder help shows for a value of type t.
func metavarOf(t *manifest.Type) string {
	switch t.Kind {
	case manifest.Int:
		return "INT"
	case manifest.Float:
		return "NUM"
	case manifest.Str:
		return "STR"
	case manifest.Bool:
		return "BOOL"
	case manifest.Optional, manifest.Recursive:
		return metavarOf(t.Elem)
	}
	return "JSON"
}

// posMetavar names a positional argument in usage: its metavar, else its
// name, else a placeholder for its type; `...` when variadic.
func posMetavar(a *manifest.Arg) string {
	var mv string
	switch {
	case a.Metavar != nil && *a.Metavar != "":
		mv = *a.Metavar
	case a.Name != nil && *a.Name != "":
		mv = strings.ToUpper(*a.Name)
	case a.Many:
		mv = metavarOf(elemOrSelf(a.T))
	default:
		mv = metavarOf(a.T)
	}
	if a.Many {
		mv += "..."
	}
	return mv
}

func elemOrSelf(t *manifest.Type) *manifest.Type {
	if u := t.Unwrap(); u.Kind == manifest.List {
		return u.Elem
	}
	return t
}

// optMetavar is the value placeholder of an option.
func optMetavar(a *manifest.Arg) string {
	if a.Metavar != nil && *a.Metavar != "" {
		return *a.Metavar
	}
	if a.T != nil {
		return metavarOf(a.T)
	}
	return "VALUE"
}

// usageLine is the one-line synopsis of a command.
func usageLine(c *manifest.Command) string {
	parts := []string{c.Name}
	hasOpts := len(c.Terminals) > 0
	for i := range c.Args {
		if c.Args[i].Kind != manifest.KindPos {
			hasOpts = true
		}
	}
	if hasOpts {
		parts = append(parts, "[OPTIONS]")
	}
	for i := range c.Args {
		a := &c.Args[i]
		if a.Kind != manifest.KindPos {
			continue
		}
		mv := posMetavar(a)
		if isOptional(a.T) {
			mv = "[" + mv + "]"
		}
		parts = append(parts, mv)
	}
	return strings.Join(parts, " ")
}

type helpRow struct{ left, right string }

func writeRows(b *strings.Builder, rows []helpRow) {
	const width = 24
	for _, r := range rows {
		if r.right == "" {
			fmt.Fprintf(b, "  %s\n", r.left)
		} else if len(r.left) <= width-4 {
			fmt.Fprintf(b, "  %-*s  %s\n", width-4, r.left, r.right)
		} else {
			fmt.Fprintf(b, "  %s\n  %-*s  %s\n", r.left, width-4, "", r.right)
		}
	}
}

func optLeft(short, long, rev, metavar string) string {
	var names []string
	if short != "" {
		names = append(names, "-"+short)
	}
	if long != "" {
		names = append(names, "--"+long)
	}
	if rev != "" {
		names = append(names, "--"+rev)
	}
	s := strings.Join(names, ", ")
	if metavar != "" {
		s += " " + metavar
	}
	return s
}

func joinDesc(desc []string) string {
	var parts []string
	for _, l := range desc {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

func withNote(text, note string) string {
	if text == "" {
		return note
	}
	if note == "" {
		return text
	}
	return text + " " + note
}

// CLIUsage is the --help text of one command: synopsis, docstring,
// arguments, options, groups, output projections and the return.
func CLIUsage(c *manifest.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n", usageLine(c))
	if len(c.Desc) > 0 {
		b.WriteString("\n" + strings.Join(c.Desc, "\n") + "\n")
	}
	var pos, opts []helpRow
	var groups []string
	for i := range c.Args {
		a := &c.Args[i]
		switch a.Kind {
		case manifest.KindPos:
			note := "(" + a.TypeName + ")"
			if a.TypeName == "" {
				note = ""
			}
			if a.Stdin {
				note = withNote(note, "(read from stdin)")
			}
			pos = append(pos, helpRow{posMetavar(a), withConstraints(withNote(joinDesc(a.Desc), note), a.Constraints)})
		case manifest.KindOpt:
			opts = append(opts, helpRow{optLeft(a.Short, a.Long, "", optMetavar(a)), withConstraints(withNote(joinDesc(a.Desc), defaultNote(a)), a.Constraints)})
		case manifest.KindFlag:
			opts = append(opts, helpRow{optLeft(a.Short, a.Long, a.LongRev, ""), withNote(joinDesc(a.Desc), "(default: "+flagDefault(a)+")")})
		case manifest.KindGrp:
			var g strings.Builder
			title := a.TypeName
			if title == "" {
				title = "Group"
			}
			fmt.Fprintf(&g, "\n%s:", title)
			if d := joinDesc(a.Desc); d != "" {
				fmt.Fprintf(&g, " %s", d)
			}
			g.WriteString("\n")
			var rows []helpRow
			if a.GroupOpt != nil {
				mv := "JSON"
				if a.Metavar != nil && *a.Metavar != "" {
					mv = *a.Metavar
				}
				rows = append(rows, helpRow{optLeft(a.GroupOpt.Short, a.GroupOpt.Long, "", mv), "the whole record as a JSON object"})
			}
			for k := range a.Entries {
				e := &a.Entries[k].Arg
				if e.Kind == manifest.KindFlag {
					rows = append(rows, helpRow{optLeft(e.Short, e.Long, e.LongRev, ""), withNote(joinDesc(e.Desc), "(default: "+flagDefault(e)+")")})
				} else {
					rows = append(rows, helpRow{optLeft(e.Short, e.Long, "", optMetavar(e)), withNote(joinDesc(e.Desc), defaultNote(e))})
				}
			}
			writeRows(&g, rows)
			groups = append(groups, g.String())
		}
	}
	if len(pos) > 0 {
		b.WriteString("\nArguments:\n")
		writeRows(&b, pos)
	}
	if len(opts) > 0 {
		b.WriteString("\nOptions:\n")
		writeRows(&b, opts)
	}
	for _, g := range groups {
		b.WriteString(g)
	}
	if len(c.Terminals) > 0 {
		b.WriteString("\nOutput projections:\n")
		var rows []helpRow
		for _, t := range c.Terminals {
			rows = append(rows, helpRow{optLeft(t.Short, t.Long, "", ""), t.Description})
		}
		writeRows(&b, rows)
	}
	if lines := commandConstraints(c); len(lines) > 0 {
		b.WriteString("\n" + strings.Join(lines, "\n") + "\n")
	}
	ret := c.Return.TypeName
	if ret == "" {
		ret = c.Return.Schema
	}
	fmt.Fprintf(&b, "\nReturns: %s", ret)
	if d := joinDesc(c.Return.Desc); d != "" {
		fmt.Fprintf(&b, ": %s", d)
	}
	b.WriteString("\n")
	return b.String()
}

func defaultNote(a *manifest.Arg) string {
	if a.Default == nil {
		return ""
	}
	return "(default: " + *a.Default + ")"
}

// ProgramUsage is the --help text of a program: synopsis, docstring and its
// commands, under their groups when the manifest has any.
func ProgramUsage(m *manifest.Manifest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s COMMAND [ARGS...]\n", m.Name)
	fmt.Fprintf(&b, "       %s COMMAND --help\n", m.Name)
	fmt.Fprintf(&b, "       %s --mcp-tools | --mcp-config\n", m.Name)
	if len(m.Desc) > 0 {
		b.WriteString("\n" + strings.Join(m.Desc, "\n") + "\n")
	}
	grouped := map[string][]helpRow{}
	var ungrouped []helpRow
	for _, c := range m.Exported() {
		summary := ""
		if len(c.Desc) > 0 {
			summary = c.Desc[0]
		}
		row := helpRow{c.Name, summary}
		if c.Group != nil && *c.Group != "" {
			grouped[*c.Group] = append(grouped[*c.Group], row)
		} else {
			ungrouped = append(ungrouped, row)
		}
	}
	if len(ungrouped) > 0 {
		b.WriteString("\nCommands:\n")
		writeRows(&b, ungrouped)
	}
	seen := map[string]bool{}
	for _, g := range m.Groups {
		rows := grouped[g.Name]
		seen[g.Name] = true
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:", g.Name)
		if d := joinDesc(g.Desc); d != "" {
			fmt.Fprintf(&b, " %s", d)
		}
		b.WriteString("\n")
		writeRows(&b, rows)
	}
	// Groups a command names but the manifest does not list, in command order.
	for _, c := range m.Exported() {
		if c.Group == nil || seen[*c.Group] || len(grouped[*c.Group]) == 0 {
			continue
		}
		seen[*c.Group] = true
		fmt.Fprintf(&b, "\n%s:\n", *c.Group)
		writeRows(&b, grouped[*c.Group])
	}
	return b.String()
}
