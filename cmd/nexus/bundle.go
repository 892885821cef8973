package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nexus-mcp/nexus/internal/bundle"
)

func newBundleCmd() *cobra.Command {
	var out, version, author, icon string
	var platforms, binaries []string
	var allowMissing bool
	c := &cobra.Command{
		Use:   "bundle TARGET [-o PROG.mcpb] [--platform OS/ARCH,...] [--binary OS/ARCH=PATH]...",
		Short: "Pack a program into an MCP Bundle (.mcpb) that Claude Desktop installs with a double-click",
		Long: "Pack a program into an MCP Bundle: a zip holding nexus for each platform, the program's\n" +
			"directory (never .git or secret-looking files) and a manifest.json (MCPB 0.3) that runs\n" +
			"`nexus mcp` on it. The platform nexus runs on is packed with this nexus; others need\n" +
			"--binary OS/ARCH=PATH (GOOS=darwin GOARCH=arm64 go build -o PATH ./cmd/nexus).\n" +
			"The same inputs give the same bytes.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("missing program: usage: nexus bundle TARGET [-o PROG.mcpb]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			target, err := bundle.ProgramTarget(args[0])
			if err != nil {
				return err
			}
			prog, err := loadProgram(target)
			if err != nil {
				return err
			}
			o := bundle.Options{Program: prog.m, Version: version, Author: author, Icon: icon,
				AllowMissingPools: allowMissing, NexusVersion: version0(), Binaries: map[bundle.Platform]string{}}
			for _, t := range prog.tools {
				o.Tools = append(o.Tools, bundle.Tool{Name: t.Name, Description: t.Description})
			}
			self, err := selfPath()
			if err != nil {
				return err
			}
			o.Binaries[bundle.Host()] = self
			var extra []bundle.Platform
			seen := map[bundle.Platform]bool{bundle.Host(): true}
			for _, b := range binaries {
				spec, file, ok := strings.Cut(b, "=")
				p, err := bundle.ParsePlatform(spec)
				if !ok || err != nil || file == "" {
					return usageErrorf("--binary %q: expected OS/ARCH=PATH, as darwin/arm64=bin/nexus-darwin-arm64 (%v)", b, err)
				}
				abs, err := filepath.Abs(file)
				if err != nil {
					return err
				}
				if !seen[p] {
					seen[p] = true
					extra = append(extra, p)
				}
				o.Binaries[p] = abs
			}
			if len(platforms) == 0 {
				// This platform, then every one a binary was given for.
				o.Platforms = []bundle.Platform{bundle.Host()}
				sort.Slice(extra, func(i, j int) bool { return extra[i].String() < extra[j].String() })
				o.Platforms = append(o.Platforms, extra...)
			}
			for _, s := range platforms {
				p, err := bundle.ParsePlatform(s)
				if err != nil {
					return usageErrorf("--platform: %v", err)
				}
				o.Platforms = append(o.Platforms, p)
			}
			if out == "" {
				out = prog.m.Name + ".mcpb"
			}
			if out, err = filepath.Abs(out); err != nil {
				return err
			}
			// Written beside its name and renamed: a failed bundle leaves no
			// half-written file behind, and never an old one half-replaced.
			tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			o.Leave = []string{out, tmp.Name()} // when written inside the program's directory
			rep, err := bundle.Write(tmp, o)
			if cerr := tmp.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if err := os.Chmod(tmp.Name(), 0o644); err != nil {
				return err
			}
			if err := os.Rename(tmp.Name(), out); err != nil {
				return err
			}
			for _, s := range rep.Skipped {
				fmt.Fprintf(os.Stderr, "nexus: left out %s\n", s)
			}
			for _, s := range rep.Missing {
				fmt.Fprintf(os.Stderr, "nexus: warning: %s (--allow-missing-pools)\n", s)
			}
			names := make([]string, len(o.Platforms))
			for i, p := range o.Platforms {
				names[i] = p.String()
			}
			fmt.Fprintf(os.Stderr, "nexus: wrote %s: %d tools, %d program files, nexus for %s\n", out, len(o.Tools), rep.Files, strings.Join(names, ", "))
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
	f.BoolVar(&allowMissing, "allow-missing-pools", false, "bundle a program whose compiled (C++) pool was not built for every platform; its tools fail there")
	return c
}

// version0 is nexus's own version (the --version flag of bundle is the
// bundle's).
func version0() string { return version }

// selfPath is this nexus's executable, links resolved.
func selfPath() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the nexus executable: %w", err)
	}
	if p, err := filepath.EvalSymlinks(self); err == nil {
		self = p
	}
	return self, nil
}
