package program

import (
	"os"
	"strings"

	"github.com/nexus-mcp/nexus/internal/argmap"
	"github.com/nexus-mcp/nexus/internal/manifest"
)

// runOptions are the nexus options of one run, given before the command.
type runOptions struct {
	keepNull     bool
	formExplicit bool // -f given: a @default projection does not apply
	outputFile   string
	leading      string // --mcp-tools, --mcp-resources, --mcp-prompts, --mcp-config or --explain given among them
	wsl          bool
	help         bool
}

// nexusOptions are the options nexus takes before a program's command
// (morloc's <nexus_options>): those of morloc's (cli.rs DispatchOptions)
// that nexus has, then nexus's own. Help lists them under "Nexus Options".
var nexusOptions = []argmap.NexusOption{
	{Short: "o", Long: "output-file", Value: "FILE", Help: "Output file (default: stdout)"},
	{Short: "f", Long: "output-form", Value: "FORM", Help: "Output form for the result: json (the one form nexus writes)"},
	{Long: "keep-null", Help: "Print top-level () / None as \"null\" instead of suppressing it"},
	{Short: "q", Long: "quiet", Help: "Log only errors on stderr (--log-level error)"},
	{Long: "mcp-tools", Help: "Print an MCP tools/list definition for every command (name, description, JSON Schema inputSchema/outputSchema) and exit"},
	{Long: "mcp-resources", Help: "Print the MCP resources/list definition of the program's resources, with its resource templates, and exit"},
	{Long: "mcp-prompts", Help: "Print the MCP prompts/list definition of the program's prompts and exit"},
	{Long: "mcp-config", Help: "Print a client MCP server config for this program (a `mcpServers` JSON entry, stdio transport, with the environment its pools need) and exit"},
	{Long: "wsl", Help: "With --mcp-config: the entry for Claude Desktop on Windows, nexus running under WSL"},
	{Long: "explain", Help: "Print one line for each manifest field nexus reads but does not honour, and exit"},
	{Long: "timeout", Value: "DURATION", Help: "How long a call may run (default: no limit on the CLI)"},
	{Long: "start-timeout", Value: "DURATION", Help: "How long a pool may take to start and say it is ready (default: 30s)"},
	{Long: "workers", Value: "N", Help: "Worker processes per pool, for pools whose manifest entry sets none; for a morloc program, instances of it"},
	{Long: "output-dir", Value: "DIR", Help: "Where functions write the files they return (NEXUS_OUTPUT_DIR; default: the current directory)"},
	{Long: "log-level", Value: "LEVEL", Help: "stderr log level: debug, info, warn or error (default: info)"},
	{Long: "log-format", Value: "FORMAT", Help: "stderr log format: text or json (default: text)"},
}

// morlocOnlyOptions are morloc's nexus options that nexus does not have:
// known, so that the split finds the command after their values, and
// refused with a clear error.
var morlocOnlyOptions = []argmap.NexusOption{
	{Short: "p", Long: "print"},
	{Short: "z", Long: "compression-level", Value: "N"},
	{Long: "log-dir", Value: "DIR"},
	{Long: "summary", Value: "PATH"},
	{Long: "json-help"},
}

// programName is how help names the program: the launcher's $0 when a
// launcher ran nexus (MORLOC_PROG_NAME, as morloc's launchers export it),
// else the module's name.
func programName(m *manifest.Manifest) string {
	if p := os.Getenv("MORLOC_PROG_NAME"); p != "" {
		return p
	}
	return m.Name
}

// parseNexusOptions applies the nexus options given before the command;
// setFlag sets nexus's own flags among them.
func parseNexusOptions(o *Options, tokens []string, setFlag func(name, value string) error) (runOptions, error) {
	var ro runOptions
	for i := 0; i < len(tokens); i++ {
		tok := tokens[i]
		name, value, hasValue := tok, "", false
		if strings.HasPrefix(tok, "--") {
			name, value, hasValue = strings.Cut(tok[2:], "=")
		} else if len(tok) >= 2 && tok[0] == '-' {
			name = tok[1:2]
			if len(tok) > 2 {
				value, hasValue = strings.TrimPrefix(tok[2:], "="), true
			}
		} else {
			return ro, Usagef("unexpected argument '%s' before the command", tok)
		}
		opt, known := findOption(nexusOptions, name)
		if !known {
			if _, morlocs := findOption(morlocOnlyOptions, name); morlocs {
				return ro, Usagef("%s is an option of morloc's nexus that nexus does not have", tok)
			}
			if name == "h" || name == "help" {
				ro.help = true
				continue
			}
			return ro, Usagef("unknown nexus option %s (the options before the command are listed by --help)", tok)
		}
		if opt.Value != "" && !hasValue {
			if i+1 >= len(tokens) {
				return ro, Usagef("nexus option --%s needs a value", opt.Long)
			}
			i++
			value = tokens[i]
		} else if opt.Value == "" && hasValue {
			return ro, Usagef("nexus option --%s takes no value", opt.Long)
		}
		switch opt.Long {
		case "output-file":
			ro.outputFile = value
		case "output-form":
			if value != "json" {
				return ro, Usagef("--output-form %s: nexus writes JSON only (json)", value)
			}
			ro.formExplicit = true
		case "keep-null":
			ro.keepNull = true
		case "quiet":
			o.LogLevel = "error"
		case "mcp-tools", "mcp-resources", "mcp-prompts", "mcp-config", "explain":
			ro.leading = "--" + opt.Long
		case "wsl":
			ro.wsl = true
		default: // nexus's own flags
			if err := setFlag(opt.Long, value); err != nil {
				return ro, Usagef("--%s: %v", opt.Long, err)
			}
			if opt.Long == "timeout" {
				o.TimeoutGiven = true
			}
		}
	}
	return ro, o.SetupLogging()
}

func findOption(opts []argmap.NexusOption, name string) (argmap.NexusOption, bool) {
	for _, o := range opts {
		if name == o.Long || (len(name) == 1 && name == o.Short) {
			return o, true
		}
	}
	return argmap.NexusOption{}, false
}
