package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/nexus-mcp/nexus/internal/bundle"
	"github.com/nexus-mcp/nexus/internal/program"
)

func newBundleCmd(o *program.Options) *cobra.Command {
	var out, version, author, icon string
	var platforms, binaries []string
	var allowMissing bool
	c := &cobra.Command{
		Use:   "bundle TARGET [-o PROG.mcpb] [--platform OS/ARCH,...] [--binary OS/ARCH=PATH]...",
		Short: "Pack a program into an MCP Bundle (.mcpb) that Claude Desktop installs with a double-click",
		Long: "Pack a program into an MCP Bundle: a zip holding nexus for each platform, the program's\n" +
			"directory (never .git or secret-looking files), the morloc runtime its pools load when\n" +
			"morloc compiled it, and a manifest.json (MCPB 0.3) that runs `nexus mcp` on it.\n" +
			"TARGET is a manifest, its directory, or the launcher morloc wrote (or its directory).\n" +
			"The platform nexus runs on is packed with this nexus; others need\n" +
			"--binary OS/ARCH=PATH (GOOS=darwin GOARCH=arm64 go build -o PATH ./cmd/nexus).\n" +
			"The same inputs give the same bytes. See docs/bundles.md.",
		Args: oneProgram("nexus bundle TARGET [-o PROG.mcpb]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, err := bundle.ProgramTarget(args[0])
			if err != nil {
				return err
			}
			prog, err := program.Load(target, o)
			if err != nil {
				return err
			}
			bo := bundle.Options{Program: prog.Manifest, Version: version, Author: author, Icon: icon,
				AllowMissingPools: allowMissing, NexusVersion: o.Version, Binaries: map[bundle.Platform]string{}}
			for _, t := range prog.Tools {
				bo.Tools = append(bo.Tools, bundle.Tool{Name: t.Name, Description: t.Description})
			}
			if bo.Binaries[bundle.Host()], err = program.Executable(); err != nil {
				return err
			}
			for _, b := range binaries {
				p, file, err := bundle.ParseBinary(b)
				if err != nil {
					return program.Usagef("%v", err)
				}
				bo.Binaries[p] = file
			}
			if bo.Platforms, err = bundle.ChoosePlatforms(platforms, bundle.Host(), bo.Binaries); err != nil {
				return program.Usagef("%v", err)
			}
			if out == "" {
				out = prog.Manifest.Name + ".mcpb"
			}
			rep, err := bundle.WriteFile(out, bo)
			if err != nil {
				return err
			}
			for _, note := range rep.Notes(bo) {
				fmt.Fprintf(os.Stderr, "nexus: %s\n", note)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&out, "output", "o", "", "the bundle to write (default: NAME.mcpb in this directory)")
	f.StringSliceVar(&platforms, "platform", nil, "the platforms to bundle, as darwin/arm64,linux/amd64 (default: this one and each --binary's)")
	f.StringArrayVar(&binaries, "binary", nil, "the nexus executable for another platform, as darwin/arm64=PATH (repeatable)")
	f.StringVar(&version, "version", "", "the bundle's version (default: the manifest's metadata.version, else its morloc version)")
	f.StringVar(&author, "author", "", "the bundle's author, as \"Name\" or \"Name <email>\" (default: the manifest's metadata.author)")
	f.StringVar(&icon, "icon", "", "a PNG icon for the bundle")
	f.BoolVar(&allowMissing, "allow-missing-pools", false, "bundle a program whose compiled parts (a C++ pool, morloc's runtime) were not built for every platform; its tools fail there")
	return c
}
