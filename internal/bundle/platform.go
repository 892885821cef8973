package bundle

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
)

// Platform is an operating system and architecture, as Go names them
// ("darwin/arm64"). MCPB names the operating systems the same way
// (compatibility.platforms, platform_overrides), save Windows ("win32"),
// where nexus does not run.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Host is the platform this nexus runs on.
func Host() Platform { return Platform{runtime.GOOS, runtime.GOARCH} }

// ParsePlatform reads "darwin/arm64", refusing what nexus cannot run on.
func ParsePlatform(s string) (Platform, error) {
	os, arch, ok := strings.Cut(strings.TrimSpace(s), "/")
	p := Platform{os, arch}
	switch {
	case !ok:
		return p, fmt.Errorf("platform %q: expected OS/ARCH, as darwin/arm64 or linux/amd64", s)
	case os == "windows" || os == "win32":
		return p, fmt.Errorf("platform %q: nexus does not run on Windows itself; there it runs under WSL (see nexus run --mcp-config --wsl)", s)
	case os != "darwin" && os != "linux":
		return p, fmt.Errorf("platform %q: expected the OS darwin or linux", s)
	case arch != "amd64" && arch != "arm64":
		return p, fmt.Errorf("platform %q: expected the architecture amd64 or arm64", s)
	}
	return p, nil
}

// platformsOf reads an executable's header: the platforms it runs on (a
// macOS universal binary runs on several).
func platformsOf(path string) (map[Platform]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s does not exist (not built?)", path)
		}
		return nil, err
	}
	defer f.Close()
	out := map[Platform]bool{}
	if e, err := elf.NewFile(f); err == nil {
		defer e.Close()
		switch e.Machine {
		case elf.EM_X86_64:
			out[Platform{"linux", "amd64"}] = true
		case elf.EM_AARCH64:
			out[Platform{"linux", "arm64"}] = true
		default:
			return nil, fmt.Errorf("%s is a Linux executable for %v, which nexus bundles do not run on", path, e.Machine)
		}
		return out, nil
	}
	add := func(cpu macho.Cpu) {
		switch cpu {
		case macho.CpuAmd64:
			out[Platform{"darwin", "amd64"}] = true
		case macho.CpuArm64:
			out[Platform{"darwin", "arm64"}] = true
		}
	}
	if m, err := macho.NewFile(f); err == nil {
		defer m.Close()
		add(m.Cpu)
		return out, nil
	}
	if fat, err := macho.NewFatFile(f); err == nil {
		defer fat.Close()
		for _, a := range fat.Arches {
			add(a.Cpu)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s is not an executable for Linux or macOS (ELF or Mach-O)", path)
}

func platformList(set map[Platform]bool) string {
	var s []string
	for p := range set {
		s = append(s, p.String())
	}
	if len(s) == 0 {
		return "no platform nexus knows"
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// fatAlign is where each architecture's slice of a universal binary starts:
// at a multiple of 2^14 (arm64's page size), as lipo aligns them.
const fatAlign = 14

// universal joins thin macOS executables into one universal (fat) Mach-O
// file, as lipo -create does: a big-endian header listing each slice's CPU,
// offset and size, then the slices, each keeping its own code signature.
func universal(paths []string) ([]byte, error) {
	type slice struct {
		cpu, sub uint32
		data     []byte
	}
	var slices []slice
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		f, err := macho.NewFile(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: not a thin Mach-O executable: %v", p, err)
		}
		slices = append(slices, slice{uint32(f.Cpu), f.SubCpu, data})
	}
	sort.Slice(slices, func(i, j int) bool { return slices[i].cpu < slices[j].cpu })
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, [2]uint32{macho.MagicFat, uint32(len(slices))})
	offset := uint32(1 << fatAlign)
	for _, s := range slices {
		binary.Write(&b, binary.BigEndian, [5]uint32{s.cpu, s.sub, offset, uint32(len(s.data)), fatAlign})
		offset += (uint32(len(s.data)) + 1<<fatAlign - 1) &^ (1<<fatAlign - 1)
	}
	for _, s := range slices {
		b.Write(make([]byte, (1<<fatAlign-b.Len()%(1<<fatAlign))%(1<<fatAlign)))
		b.Write(s.data)
	}
	return b.Bytes(), nil
}
