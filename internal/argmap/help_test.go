package argmap

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nexus-mcp/nexus/internal/manifest"
)

var testNexusOptions = []NexusOption{
	{Short: "o", Long: "output-file", Value: "FILE", Help: "Output file (default: stdout)"},
	{Long: "keep-null", Help: "Print top-level () / None as \"null\" instead of suppressing it"},
	{Long: "timeout", Value: "DURATION", Help: "How long a call may run"},
}

func helpOf(t *testing.T, m *manifest.Manifest, argv ...string) string {
	t.Helper()
	inv, err := SplitInvocation(m, argv, HelpContext{Prog: "./prog", Options: testNexusOptions})
	if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	if inv.Help == "" {
		t.Fatalf("%v: no help", argv)
	}
	return inv.Help
}

// Help in morloc's layout (help.go), pinned for corpus programs: a program
// with groups, a group, a grouped command with options and positionals,
// a one-command program, records unrolled and whole, terminals; -h and
// --help (which adds the Nexus Options block).
func TestHelpGolden(t *testing.T) {
	for _, c := range []struct {
		prog string
		argv []string
	}{
		{"groups-py", []string{"-h"}},
		{"groups-py", []string{"--help"}},
		{"groups-py", []string{"arith", "-h"}},
		{"groups-py", []string{"arith", "scale", "-h"}},
		{"groups-py", []string{"text", "shout", "--help"}},
		{"single-pure", []string{"-h"}},
		{"single-pure", []string{"tagged", "--help"}},
		{"many-pure", []string{"both", "-h"}},
		{"records-py", []string{"fit", "-h"}},
		{"records-py", []string{"fit", "--help"}},
		{"terminals-py", []string{"wordsOf", "-h"}},
		{"optional-r", []string{"greet", "-h"}},
		{"groups-r", []string{"stats", "spread", "-h"}},
		{"single-py", []string{"-h"}},
	} {
		name := c.prog + "." + strings.Join(c.argv, "_") + ".txt"
		t.Run(name, func(t *testing.T) {
			m := loadManifest(t, filepath.Join(corpusDir, c.prog, "manifest.json"))
			checkGolden(t, filepath.Join("help", name), []byte(helpOf(t, m, c.argv...)))
		})
	}
}

// The layout's rules, each on its own: the usage lines of morloc's
// help.rs, the Nexus Options block only in --help, clap's columns.
func TestHelpLayout(t *testing.T) {
	groups := loadManifest(t, filepath.Join(corpusDir, "groups-py", "manifest.json"))
	single := loadManifest(t, filepath.Join(corpusDir, "single-pure", "manifest.json"))
	for _, c := range []struct {
		name string
		text string
		want []string
		not  []string
	}{
		{"program", helpOf(t, groups, "-h"), []string{
			"A lab toolbox: arithmetic and text helpers in groups, and a version.\n\nUsage: ./prog <nexus_options> <command> <command_options>\n",
			"\nCommands:\n  arith    Integer and real arithmetic\n  text     String helpers\n  version  The toolbox version\n",
			"\nGeneral Options:\n  -h, --help  Print help (see more with '--help')\n",
		}, []string{"Nexus Options", "addInts"}},
		{"program --help", helpOf(t, groups, "--help"), []string{
			"\nNexus Options:\n  -o, --output-file <FILE>\n          Output file (default: stdout)\n\n      --keep-null\n",
			"  -h, --help\n          Print help (see a summary with '-h')\n",
		}, nil},
		{"group", helpOf(t, groups, "text", "-h"), []string{
			"Usage: ./prog <nexus_options> text <command> <command_options>\n",
			"Commands:\n  shout       Upper-case a word, with an exclamation mark unless told to be quiet\n  repeatWord  Repeat a word\n",
		}, nil},
		{"grouped command", helpOf(t, groups, "text", "repeatWord", "-h"), []string{
			"Usage: ./prog <nexus_options> text repeatWord <command_options>\n",
			"  -n, --times <N>  how many times\n                   type: Int [default: 2]\n",
			"Positional arguments:\n  1:  type: Str    (literal string)\n\nReturn: [Str]\n",
		}, nil},
		{"flag", helpOf(t, groups, "text", "shout", "-h"), []string{
			"  -q, --quiet  end without the exclamation mark\n               type: Bool\n               default: false\n",
		}, []string{"--loud"}},
		{"one command", helpOf(t, single, "-h"), []string{
			"Usage: ./prog <nexus_options> @ <command_options>\n",
			"  -t, --tag <Str>  the label to pair with\n",
		}, nil},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.text, w) {
				t.Errorf("%s: help lacks %q:\n%s", c.name, w, c.text)
			}
		}
		for _, w := range c.not {
			if strings.Contains(c.text, w) {
				t.Errorf("%s: help has %q:\n%s", c.name, w, c.text)
			}
		}
	}
}

// SplitInvocation: where nexus's options end and the command starts
// (cli.rs split_run_argv_at_separator), and which command it is.
func TestSplitInvocation(t *testing.T) {
	groups := loadManifest(t, filepath.Join(corpusDir, "groups-pure", "manifest.json"))
	single := loadManifest(t, filepath.Join(corpusDir, "single-pure", "manifest.json"))
	h := HelpContext{Prog: "p", Options: testNexusOptions, Unlisted: []NexusOption{{Long: "log-dir", Value: "DIR"}}}
	for _, c := range []struct {
		m            *manifest.Manifest
		argv         []string
		nexus, cmd   string
		args, errHas string
	}{
		{groups, []string{"pairs", "dup", "5"}, "", "dup", "5", ""},
		{groups, []string{"--keep-null", "answer"}, "--keep-null", "answer", "", ""},
		// A value-taking nexus option takes the next word, even a command's name.
		{groups, []string{"--timeout", "answer", "answer"}, "--timeout answer", "answer", "", ""},
		{groups, []string{"-o", "f", "@", "lists", "wrap", "w"}, "-o f", "wrap", "w", ""},
		// So does an unlisted one (morloc's, which nexus then refuses by name).
		{groups, []string{"--log-dir", "answer", "answer"}, "--log-dir answer", "answer", "", ""},
		{groups, []string{"answer", "--log-dir", "x"}, "", "", "", "is a nexus option, not a command option"},
		{groups, []string{"dup", "5"}, "", "", "", "command 'dup' is in the group 'pairs'"},
		{groups, []string{"lists", "swap"}, "", "", "", "the group 'lists' has no command 'swap'"},
		{groups, []string{"answr"}, "", "", "", "Did you mean 'answer'?"},
		{groups, []string{"answer", "--keep-null"}, "", "", "", "is a nexus option, not a command option"},
		{single, []string{"5"}, "", "tagged", "5", ""},
		{single, []string{"tagged", "-t", "x", "5"}, "", "tagged", "-t x 5", ""},
		{single, []string{"--keep-null", "@", "5"}, "--keep-null", "tagged", "5", ""},
		{single, []string{"--keep-null", "5"}, "", "", "", "is a nexus option"},
	} {
		inv, err := SplitInvocation(c.m, c.argv, h)
		name := strings.Join(c.argv, " ")
		if !errAsWanted(t, name, err, c.errHas) {
			continue
		}
		if strings.Join(inv.Nexus, " ") != c.nexus || inv.Command == nil || inv.Command.Name != c.cmd || strings.Join(inv.Args, " ") != c.args {
			t.Errorf("%s: nexus %q command %v args %q; want %q %s %q", name, inv.Nexus, inv.Command, inv.Args, c.nexus, c.cmd, c.args)
		}
	}
	// An option that needs no command leads: --explain as --mcp-tools, in
	// a program of one command too (where all else is the command's).
	for _, m := range []*manifest.Manifest{groups, single} {
		for _, lead := range []string{"--mcp-tools", "--mcp-config", "--explain"} {
			inv, err := SplitInvocation(m, []string{lead}, h)
			if err != nil || inv.Leading != lead || inv.Command != nil {
				t.Errorf("%s %s: %v, %+v; want it leading", m.Name, lead, err, inv)
			}
		}
	}
	// Help lists nexus's options, never the unlisted ones.
	if inv, err := SplitInvocation(groups, []string{"--help"}, h); err != nil || !strings.Contains(inv.Help, "--timeout <DURATION>") || strings.Contains(inv.Help, "log-dir") {
		t.Errorf("--help (%v) lists an unlisted option, or not nexus's:\n%s", err, inv.Help)
	}
	// A group with no command: the group's help, as an error.
	_, err := SplitInvocation(groups, []string{"pairs"}, h)
	var he *HelpError
	if !errors.As(err, &he) || !strings.Contains(he.Text, "Usage: p <nexus_options> pairs <command> <command_options>") {
		t.Errorf("pairs alone: %v", err)
	}
}
