package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ParseBinary reads --binary's OS/ARCH=PATH: the nexus executable for
// another platform, its path made absolute.
func ParseBinary(s string) (Platform, string, error) {
	spec, file, ok := strings.Cut(s, "=")
	p, err := ParsePlatform(spec)
	if !ok || file == "" {
		return p, "", fmt.Errorf("--binary %q: expected OS/ARCH=PATH, as darwin/arm64=bin/nexus-darwin-arm64", s)
	}
	if err != nil {
		return p, "", fmt.Errorf("--binary %q: %w", s, err)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return p, "", fmt.Errorf("--binary %q: %w", s, err)
	}
	return p, abs, nil
}

// ChoosePlatforms is the bundle's platforms: those asked (--platform), or
// else the host's, then every other one a binary was given for, sorted.
func ChoosePlatforms(asked []string, host Platform, binaries map[Platform]string) ([]Platform, error) {
	if len(asked) == 0 {
		out := []Platform{host}
		var extra []Platform
		for p := range binaries {
			if p != host {
				extra = append(extra, p)
			}
		}
		sort.Slice(extra, func(i, j int) bool { return extra[i].String() < extra[j].String() })
		return append(out, extra...), nil
	}
	var out []Platform
	for _, s := range asked {
		p, err := ParsePlatform(s)
		if err != nil {
			return nil, fmt.Errorf("--platform: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// WriteFile writes the bundle to the file out: beside it first, then
// renamed, so that a failed bundle leaves no half-written file behind, and
// never an old one half-replaced. The file is never packed into itself.
func WriteFile(out string, o Options) (*Report, error) {
	out, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	o.Leave = append(append([]string(nil), o.Leave...), out, tmp.Name()) // when written inside the program's directory
	rep, err := Write(tmp, o)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return nil, err
	}
	rep.Path = out
	return rep, nil
}

// Notes are what `nexus bundle` tells its user of the bundle it wrote
// with o: what it left out, what it allowed, and a summary.
func (r *Report) Notes(o Options) []string {
	var notes []string
	for _, s := range r.Skipped {
		notes = append(notes, "left out "+s)
	}
	for _, s := range r.Missing {
		notes = append(notes, "warning: "+s+" (--allow-missing-pools)")
	}
	names := make([]string, len(o.Platforms))
	for i, p := range o.Platforms {
		names[i] = p.String()
	}
	summary := fmt.Sprintf("wrote %s: %d tools, %d program files, nexus for %s", r.Path, len(o.Tools), r.Files, strings.Join(names, ", "))
	if r.Runtime > 0 {
		summary += fmt.Sprintf(", %d files of morloc's runtime", r.Runtime)
	}
	return append(notes, summary)
}
