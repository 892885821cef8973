package argmap

import (
	"fmt"
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// Help in morloc's layout. morloc 0.98.2 builds a clap command from the
// manifest (phase2.rs build_root, build_command_args; help.rs) and clap
// 4.6 renders it; this renders the same layout:
//
//	<about>
//
//	Usage: prog <nexus_options> <command> <command_options>
//
//	Commands:                 (a program or group: groups, then commands)
//	  name  first docstring line
//
//	General Options:
//	  -h, --help  Print help (see more with '--help')
//
//	Optional arguments:       (a command's options, flags, group fields)
//	  -k, --factor <Real>  multiplier
//	                       type: Real [default: 2.5]
//
//	Positional arguments:
//	  1:  type: Real
//
//	Return: Real
//
// -h gives that; --help the long form: each option's help on its own
// lines, the whole docstring, and a "Nexus Options" block listing what
// nexus takes before the command (morloc's options nexus has, and its own).
// clap's wrapping at the terminal's width is not reproduced.

// clapArg is an option as clap lists it.
type clapArg struct {
	short, long string
	value       string // value name, "" for a switch
	many        bool   // takes several values: <V>...
	help        string // may hold newlines
	longHelp    string // --help's text, when it differs
	def         string // [default: ...]
}

// display is clap's Arg Display: the long name, else the short one, then
// the value.
func (a clapArg) display() string {
	s := "--" + a.long
	if a.long == "" {
		s = "-" + a.short
	}
	return s + a.suffix()
}

func (a clapArg) suffix() string {
	if a.value == "" {
		return ""
	}
	s := " <" + a.value + ">"
	if a.many {
		s += "..."
	}
	return s
}

// spec is clap's spec_vals: the default, quoted when it holds a space.
func (a clapArg) spec() string {
	if a.def == "" {
		return ""
	}
	d := a.def
	if strings.ContainsAny(d, " \t\n") {
		d = fmt.Sprintf("%q", d)
	}
	return "[default: " + d + "]"
}

// writeClapArgs is clap's write_args for one section.
func writeClapArgs(b *strings.Builder, args []clapArg, long bool) {
	longest := 2
	for _, a := range args {
		if a.value != "" || a.long != "" || a.short == "" {
			longest = max(longest, len(a.display()))
		}
	}
	for i, a := range args {
		if i > 0 {
			b.WriteString("\n")
			if long {
				b.WriteString("\n")
			}
		}
		b.WriteString("  ")
		if a.short != "" {
			b.WriteString("-" + a.short)
			if a.long != "" {
				b.WriteString(", ")
			}
		} else if a.long != "" {
			b.WriteString("    ")
		}
		if a.long != "" {
			b.WriteString("--" + a.long)
		}
		b.WriteString(a.suffix())
		help := a.help
		if long && a.longHelp != "" {
			help = a.longHelp
		}
		if spec := a.spec(); spec != "" {
			switch {
			case help == "":
				help = spec
			case long:
				help += "\n\n" + spec
			default:
				help += " " + spec
			}
		}
		var indent string
		if long {
			indent = strings.Repeat(" ", 10)
			b.WriteString("\n" + indent)
		} else {
			pad := 2
			if a.long == "" {
				pad = 6
			}
			b.WriteString(strings.Repeat(" ", longest+pad-len(a.display())))
			indent = strings.Repeat(" ", longest+8)
		}
		b.WriteString(strings.ReplaceAll(help, "\n", "\n"+indent))
	}
}

// clapCommand is what clap renders for a program, group or command.
type clapCommand struct {
	about, longAbout string
	hasAbout         bool // a command's about is set even when ""
	usage            string
	subcommands      [][2]string // name, about
	general          []clapArg
	optional         []clapArg
	after            string // after_help: positionals, return
	nexus            []NexusOption
}

var helpArg = clapArg{short: "h", long: "help", help: "Print help (see more with '--help')", longHelp: "Print help (see a summary with '-h')"}

// render is clap's default template,
// "{about-with-newline}\n{usage-heading} {usage}\n\n{all-args}{after-help}",
// then clap's write_help: the first line dropped when blank, trailing
// white space trimmed, one newline added. A command always has an about
// (phase2.rs sets its first docstring line, "" when it has none), so
// one without a docstring starts with a blank line, as clap prints it.
func (c clapCommand) render(long bool) string {
	var b strings.Builder
	about := c.about
	if long && c.longAbout != "" {
		about = c.longAbout
	}
	if c.hasAbout || about != "" {
		b.WriteString(about + "\n")
	}
	b.WriteString("\nUsage: " + c.usage + "\n\n")
	first := true
	section := func(title string) {
		if !first {
			b.WriteString("\n\n")
		}
		first = false
		b.WriteString(title + ":\n")
	}
	if len(c.subcommands) > 0 {
		section("Commands")
		longest := 2
		for _, sc := range c.subcommands {
			longest = max(longest, len(sc[0]))
		}
		for i, sc := range c.subcommands {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "  %s%s%s", sc[0], strings.Repeat(" ", longest+2-len(sc[0])), sc[1])
		}
	}
	section("General Options")
	writeClapArgs(&b, append([]clapArg{helpArg}, c.general...), long)
	if len(c.optional) > 0 {
		section("Optional arguments")
		writeClapArgs(&b, c.optional, long)
	}
	after := c.after
	if long {
		block := nexusOptionsBlock(c.nexus)
		if after == "" {
			after = block
		} else {
			after += "\n\n" + block
		}
	}
	if after != "" {
		b.WriteString("\n\n" + after)
	}
	text := b.String()
	if i := strings.IndexByte(text, '\n'); i >= 0 && strings.TrimSpace(text[:i]) == "" {
		text = text[i+1:]
	}
	return strings.TrimRight(text, " \t\n") + "\n"
}

// nexusOptionsBlock is help.rs nexus_options_block: nexus's options in
// clap's long layout under "Nexus Options:".
func nexusOptionsBlock(opts []NexusOption) string {
	var args []clapArg
	for _, o := range opts {
		args = append(args, clapArg{short: o.Short, long: o.Long, value: o.Value, help: o.Help})
	}
	var b strings.Builder
	b.WriteString("Nexus Options:\n")
	writeClapArgs(&b, args, true)
	return b.String()
}

// renderArgHelp is phase2.rs render_arg_help: the docstring lines, then
// `type: T`, then `default: D` (flags only; options show clap's
// [default: D]); then, nexus's addition, the argument's constraints that
// have no JSON Schema form, so that a reader still learns of them.
func renderArgHelp(desc []string, typ, def string, cs []manifest.Constraint) string {
	var lines []string
	for _, d := range desc {
		if strings.TrimSpace(d) != "" {
			lines = append(lines, d)
		}
	}
	if strings.TrimSpace(typ) != "" {
		lines = append(lines, "type: "+typ)
	}
	if strings.TrimSpace(def) != "" {
		lines = append(lines, "default: "+def)
	}
	if s := shownConstraints(cs); s != "" {
		lines = append(lines, "constraints: "+s)
	}
	return strings.Join(lines, "\n")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// optionArg is one option, flag or group field as clap lists it.
func optionArg(a *manifest.Arg) clapArg {
	if a.Kind == manifest.KindFlag {
		return clapArg{short: a.Short, long: a.Long, help: renderArgHelp(a.Desc, "Bool", deref(a.Default), nil)}
	}
	return clapArg{short: a.Short, long: a.Long, value: valueName(a.Metavar, "arg"), many: a.Many,
		help: renderArgHelp(a.Desc, a.TypeName, "", a.Constraints), def: deref(a.Default)}
}

func valueName(metavar *string, fallback string) string {
	if metavar != nil && *metavar != "" {
		return *metavar
	}
	return fallback
}

// positionalBlock is phase2.rs render_positional_block.
func positionalBlock(c *manifest.Command) string {
	var pos []*manifest.Arg
	for i := range c.Args {
		if c.Args[i].Kind == manifest.KindPos {
			pos = append(pos, &c.Args[i])
		}
	}
	if len(pos) == 0 {
		return ""
	}
	width := len(fmt.Sprint(len(pos)))
	var b strings.Builder
	b.WriteString("Positional arguments:")
	for i, a := range pos {
		prefix := fmt.Sprintf("  %*d:  ", width, i+1)
		lines := strings.Split(renderArgHelp(a.Desc, a.TypeName, "", a.Constraints), "\n")
		if lines[0] == "" {
			b.WriteString("\n" + strings.TrimRight(prefix, " "))
			continue
		}
		for k, l := range lines {
			if k == 0 {
				b.WriteString("\n" + prefix + l)
			} else {
				b.WriteString("\n" + strings.Repeat(" ", len(prefix)) + l)
			}
		}
	}
	return b.String()
}

// returnBlock is phase2.rs render_return_block.
func returnBlock(m *manifest.Manifest, c *manifest.Command) string {
	show := func(r *manifest.Return) string {
		if r.Mime != "" {
			return r.Mime
		}
		return r.TypeName
	}
	var b strings.Builder
	if len(c.Terminals) == 0 {
		if c.Return.TypeName == "" {
			return ""
		}
		b.WriteString("Return: " + show(&c.Return))
	} else {
		rows := [][2]string{{"default", show(&c.Return)}}
		for _, t := range c.Terminals {
			label := "--" + t.Long
			if t.Short != "" {
				label = "-" + t.Short + "/--" + t.Long
			}
			ret := ""
			if e := m.Command(t.Entry); e != nil {
				ret = show(&e.Return)
			}
			rows = append(rows, [2]string{label, ret})
		}
		width := 0
		for _, r := range rows {
			width = max(width, len(r[0])+1)
		}
		b.WriteString("Return:")
		for _, r := range rows {
			fmt.Fprintf(&b, "\n  %-*s %s", width, r[0]+":", r[1])
		}
	}
	for _, l := range c.Return.Desc {
		b.WriteString("\n  " + l)
	}
	return b.String()
}

func firstDesc(desc []string) string {
	for _, d := range desc {
		if strings.TrimSpace(d) != "" {
			return d
		}
	}
	return ""
}

// commandClap is phase2.rs build_command_args.
func commandClap(m *manifest.Manifest, c *manifest.Command) clapCommand {
	cc := clapCommand{about: firstDesc(c.Desc), longAbout: strings.Join(c.Desc, "\n"), hasAbout: true}
	for i := range c.Args {
		a := &c.Args[i]
		switch a.Kind {
		case manifest.KindOpt, manifest.KindFlag:
			cc.optional = append(cc.optional, optionArg(a))
		case manifest.KindGrp:
			if g := a.GroupOpt; g != nil {
				value := "JSON"
				if a.Metavar != nil && *a.Metavar != "" {
					value = *a.Metavar + "_JSON"
				}
				cc.optional = append(cc.optional, clapArg{short: g.Short, long: g.Long, value: value, help: renderArgHelp(a.Desc, a.TypeName, "", a.Constraints)})
			}
			for k := range a.Entries {
				cc.optional = append(cc.optional, optionArg(&a.Entries[k].Arg))
			}
		}
	}
	for _, t := range c.Terminals {
		cc.general = append(cc.general, clapArg{short: t.Short, long: t.Long, help: t.Description})
	}
	var after []string
	for _, block := range []string{positionalBlock(c), returnBlock(m, c), strings.Join(commandConstraints(c), "\n")} {
		if block != "" {
			after = append(after, block)
		}
	}
	cc.after = strings.Join(after, "\n\n")
	return cc
}

// commandHelp is the help of one command, called in its group if it has one.
func commandHelp(m *manifest.Manifest, c *manifest.Command, group string, h HelpContext, long bool) string {
	cc := commandClap(m, c)
	cc.nexus = h.Options
	switch {
	case singleCommand(m) == c:
		cc.usage = h.Prog + " <nexus_options> @ <command_options>"
	case group != "":
		cc.usage = fmt.Sprintf("%s <nexus_options> %s %s <command_options>", h.Prog, group, c.Name)
	default:
		cc.usage = fmt.Sprintf("%s <nexus_options> %s <command_options>", h.Prog, c.Name)
	}
	return cc.render(long)
}

// programHelp is the help of the whole program: its groups and ungrouped
// commands (a one-command program's is its command's).
func programHelp(m *manifest.Manifest, h HelpContext, long bool) string {
	if c := singleCommand(m); c != nil {
		return commandHelp(m, c, "", h, long)
	}
	cc := clapCommand{about: firstDesc(m.Desc), usage: h.Prog + " <nexus_options> <command> <command_options>", nexus: h.Options}
	if len(m.Desc) > 0 {
		cc.about = m.Desc[0]
	}
	for _, g := range programGroups(m) {
		cc.subcommands = append(cc.subcommands, [2]string{g.Name, firstDesc(g.Desc)})
	}
	for _, c := range m.Exported() {
		if c.Group == nil || *c.Group == "" {
			cc.subcommands = append(cc.subcommands, [2]string{c.Name, firstDesc(c.Desc)})
		}
	}
	return cc.render(long)
}

// groupHelp is the help of one group: its commands.
func groupHelp(m *manifest.Manifest, g manifest.Group, h HelpContext, long bool) string {
	cc := clapCommand{about: firstDesc(g.Desc), usage: fmt.Sprintf("%s <nexus_options> %s <command> <command_options>", h.Prog, g.Name), nexus: h.Options}
	if len(g.Desc) > 0 {
		cc.about = g.Desc[0]
	}
	for _, c := range m.Exported() {
		if c.Group != nil && *c.Group == g.Name {
			cc.subcommands = append(cc.subcommands, [2]string{c.Name, firstDesc(c.Desc)})
		}
	}
	return cc.render(long)
}

// ProgramHelp is the program's -h (long false) or --help text.
func ProgramHelp(m *manifest.Manifest, h HelpContext, long bool) string {
	return programHelp(m, h, long)
}
