package argmap

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

// A program's command line, as morloc 0.98.2's nexus reads it
// (data/rust/morloc-nexus/src/cli.rs split_run_argv_at_separator and
// phase2.rs parse_run):
//
//	prog <nexus_options> <command> <command_options>          several commands
//	prog <nexus_options> <group> <command> <command_options>  a grouped command
//	prog <nexus_options> @ <command_options>                  one command
//
// Nexus's own options come before the command; `@` ends them explicitly.
// With several commands (or any group) the first word that is not an option
// is the command or group; with one command and no group, everything after
// the program is the command's (its name may be given or left out), and
// nexus options need `@`.

// Invocation is a program's argv split into nexus's options and the
// command's.
type Invocation struct {
	// Nexus holds the options for nexus, before the command (or `@`).
	Nexus []string
	// Leading is --mcp-tools, --mcp-resources, --mcp-prompts, --mcp-config
	// or --json-help when it leads the command's part: morloc takes it
	// there as a nexus option too; and nexus's own --explain, which
	// likewise needs no command.
	// Rest is what follows it.
	Leading string
	Rest    []string
	// Help is the text to print when help was asked for (-h or --help
	// among the command's tokens); Long is --help's.
	Help string
	// Command is the command to run, with its own argv; nil with Help.
	Command *manifest.Command
	Args    []string
}

// NexusOption is one option nexus takes before the command: listed in help
// under "Nexus Options".
type NexusOption struct {
	Short, Long string
	Value       string // the value's placeholder; "" for a switch
	Help        string
}

// HelpContext is what help needs beyond the manifest: the program's name
// as the user typed it and nexus's options.
type HelpContext struct {
	Prog    string
	Options []NexusOption
	// Unlisted are options the split knows, so that it finds the command
	// after their values, but help does not list: morloc's nexus options
	// that nexus refuses.
	Unlisted []NexusOption
}

// known is every option the split knows: nexus's, then the unlisted.
func (h HelpContext) known() []NexusOption {
	return append(append([]NexusOption(nil), h.Options...), h.Unlisted...)
}

// takesValue reports whether the nexus option tok (--name or -x) consumes
// the next token.
func (h HelpContext) takesValue(tok string) bool {
	for _, o := range h.known() {
		if o.Value == "" {
			continue
		}
		if (o.Long != "" && tok == "--"+o.Long) || (o.Short != "" && tok == "-"+o.Short) {
			return true
		}
	}
	return false
}

func (h HelpContext) isNexusLong(name string) bool {
	for _, o := range h.known() {
		if o.Long != "" && name == "--"+o.Long {
			return true
		}
	}
	return false
}

// looksLikeOption is cli.rs looks_like_flag: `--x`, or `-` and a letter
// (so -5 is a value).
func looksLikeOption(tok string) bool {
	if len(tok) < 2 || tok[0] != '-' {
		return false
	}
	c := tok[1]
	return c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// singleCommand is the one visible command when the program has exactly
// one and no group (phase2.rs: `single` mode), else nil.
func singleCommand(m *manifest.Manifest) *manifest.Command {
	exported := m.Exported()
	if len(exported) != 1 || len(programGroups(m)) > 0 {
		return nil
	}
	return exported[0]
}

// UsageError is a mistake on the command line: the caller prints it and
// exits with status 2, as morloc's (clap's) errors do.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usageErr(format string, a ...any) error {
	return &UsageError{fmt.Sprintf(format, a...)}
}

// SplitInvocation splits the argv after the program into nexus's options
// and the command's part, finds the command (through its group), and
// answers -h/--help with the help of the program, group or command.
func SplitInvocation(m *manifest.Manifest, argv []string, h HelpContext) (*Invocation, error) {
	inv := &Invocation{}
	single := singleCommand(m)
	// cli.rs split_run_argv_at_separator, after the target.
	user := argv
	for j := 0; j < len(argv); j++ {
		tok := argv[j]
		if h.takesValue(tok) {
			j++
			continue
		}
		if tok == "@" {
			inv.Nexus, user = argv[:j], argv[j+1:]
			break
		}
		if looksLikeOption(tok) {
			continue
		}
		if single != nil {
			break // everything after the program is the command's
		}
		if isCommandWord(m, tok) {
			inv.Nexus, user = argv[:j], argv[j:]
			break
		}
		return nil, unknownCommand(m, tok)
	}
	if len(user) > 0 {
		switch user[0] {
		case "--mcp-tools", "--mcp-resources", "--mcp-prompts", "--mcp-config", "--json-help", "--explain":
			inv.Leading, inv.Rest = user[0], user[1:]
			return inv, nil
		}
	}
	return inv, inv.command(m, single, user, h)
}

func isCommandWord(m *manifest.Manifest, tok string) bool {
	if c := m.Command(tok); c != nil && !c.Internal {
		return true
	}
	for _, g := range programGroups(m) {
		if g.Name == tok {
			return true
		}
	}
	return false
}

// unknownCommand is the splitter's error for a word that names no command
// or group, with clap's "did you mean" when one is close.
func unknownCommand(m *manifest.Manifest, tok string) error {
	// A grouped command given without its group: say which group.
	if c := m.Command(tok); c != nil && !c.Internal && c.Group != nil && *c.Group != "" {
		return usageErr("command '%s' is in the group '%s': call it as `%s %s ...`", tok, *c.Group, *c.Group, tok)
	}
	var names []string
	for _, c := range m.Exported() {
		names = append(names, c.Name)
	}
	for _, g := range programGroups(m) {
		names = append(names, g.Name)
	}
	if hint := didYouMean(tok, names); hint != "" {
		return usageErr("no such command '%s'. Did you mean '%s'?", tok, hint)
	}
	return usageErr("no such command '%s' (run with --help to list the commands)", tok)
}

// didYouMean is cli.rs did_you_mean: the closest name within one edit per
// three characters (at least one).
func didYouMean(query string, names []string) string {
	max := len([]rune(query)) / 3
	if max < 1 {
		max = 1
	}
	best, bestD := "", max+1
	sort.Strings(names)
	for _, n := range names {
		if d := levenshtein(query, n); d <= max && d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}

// wantsHelp finds -h or --help among a command's tokens, before `--`.
func wantsHelp(tokens []string) (asked, long bool) {
	for _, t := range tokens {
		switch t {
		case "--":
			return asked, long
		case "--help":
			return true, true
		case "-h":
			asked = true
		}
	}
	return asked, long
}

// command resolves the command's part (phase2.rs parse_run).
func (inv *Invocation) command(m *manifest.Manifest, single *manifest.Command, user []string, h HelpContext) error {
	if single != nil {
		if len(user) > 0 && user[0] == single.Name {
			user = user[1:]
		}
		if asked, long := wantsHelp(user); asked {
			inv.Help = commandHelp(m, single, "", h, long)
			return nil
		}
		inv.Command, inv.Args = single, user
		return misplacedNexusOption(single, user, h)
	}
	if len(user) == 0 {
		return &HelpError{Text: programHelp(m, h, false)}
	}
	first := user[0]
	if first == "-h" || first == "--help" {
		inv.Help = programHelp(m, h, first == "--help")
		return nil
	}
	if looksLikeOption(first) {
		if h.isNexusLong(strings.SplitN(first, "=", 2)[0]) {
			return usageErr("unexpected argument '%s'\n%s", first, nexusOptionHint(first))
		}
		return usageErr("unexpected argument '%s' (run with --help for the commands)", first)
	}
	for _, g := range programGroups(m) {
		if g.Name != first {
			continue
		}
		rest := user[1:]
		if len(rest) == 0 {
			return &HelpError{Text: groupHelp(m, g, h, false), Msg: fmt.Sprintf("the group '%s' needs one of its commands: %s", g.Name, strings.Join(groupCommandNames(m, g.Name), ", "))}
		}
		if rest[0] == "-h" || rest[0] == "--help" {
			inv.Help = groupHelp(m, g, h, rest[0] == "--help")
			return nil
		}
		c := m.Command(rest[0])
		if c == nil || c.Internal || c.Group == nil || *c.Group != g.Name {
			return usageErr("the group '%s' has no command '%s' (it has: %s)", g.Name, rest[0], strings.Join(groupCommandNames(m, g.Name), ", "))
		}
		return inv.run(m, c, g.Name, rest[1:], h)
	}
	c := m.Command(first)
	if c == nil || c.Internal {
		return unknownCommand(m, first)
	}
	if c.Group != nil && *c.Group != "" {
		return unknownCommand(m, first)
	}
	return inv.run(m, c, "", user[1:], h)
}

func (inv *Invocation) run(m *manifest.Manifest, c *manifest.Command, group string, args []string, h HelpContext) error {
	if asked, long := wantsHelp(args); asked {
		inv.Help = commandHelp(m, c, group, h, long)
		return nil
	}
	inv.Command, inv.Args = c, args
	return misplacedNexusOption(c, args, h)
}

// HelpError is help printed because something was missing (a program
// without its command, a group without its command): morloc's clap
// prints the help on stderr and exits with status 2.
type HelpError struct {
	Text string
	Msg  string // what was missing, when there is more to say
}

func (e *HelpError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	return "a command is needed"
}

// misplacedNexusOption rejects a nexus option among the command's tokens,
// with phase2.rs's hint (nexus_flag_hint_for_error), unless the command
// has an option of that name itself.
func misplacedNexusOption(c *manifest.Command, tokens []string, h HelpContext) error {
	p, err := newPlan(c)
	if err != nil {
		return nil // parseCLI reports it
	}
	own := cliOptionTable(c, p)
	for _, tok := range tokens {
		if tok == "--" {
			return nil
		}
		if !strings.HasPrefix(tok, "--") {
			continue
		}
		name := strings.SplitN(tok[2:], "=", 2)[0]
		if own.long[name] == nil && h.isNexusLong("--"+name) {
			return usageErr("%s: unexpected argument '--%s' found\n%s", c.Name, name, nexusOptionHint(tok))
		}
	}
	return nil
}

// nexusOptionHint is phase2.rs's hint for a nexus option written among
// the command's options.
func nexusOptionHint(tok string) string {
	name := strings.SplitN(tok, "=", 2)[0]
	return fmt.Sprintf("hint: `%s` is a nexus option, not a command option. Place it left of `@` (single-export) or left of the subcommand (multi-export), e.g. `./prog %s X @ cmd arg` or `./prog %s X cmd arg`.", name, name, name)
}

// programGroups lists the program's groups: those the manifest declares,
// then those its commands name without declaring them, in command order.
func programGroups(m *manifest.Manifest) []manifest.Group {
	var gs []manifest.Group
	seen := map[string]bool{}
	for _, g := range m.Groups {
		if !seen[g.Name] {
			seen[g.Name] = true
			gs = append(gs, g)
		}
	}
	for _, c := range m.Exported() {
		if c.Group != nil && *c.Group != "" && !seen[*c.Group] {
			seen[*c.Group] = true
			gs = append(gs, manifest.Group{Name: *c.Group})
		}
	}
	return gs
}

func groupCommandNames(m *manifest.Manifest, group string) []string {
	var names []string
	for _, c := range m.Exported() {
		if c.Group != nil && *c.Group == group {
			names = append(names, c.Name)
		}
	}
	return names
}
