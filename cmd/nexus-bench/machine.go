package main

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
)

func lookPath(name string) (string, error) { return exec.LookPath(name) }

// machine is the header above the table: when, on what, with which tools,
// and the configuration, so that a pasted table says what it measured.
func (b *bench) machine() string {
	cpu := "unknown CPU"
	if info, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if m := regexp.MustCompile(`(?m)^model name\s*:\s*(.+)$`).FindSubmatch(info); m != nil {
			cpu = string(m[1])
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	parts := []string{
		b.started.UTC().Format("2006-01-02 15:04 UTC"),
		fmt.Sprintf("%d × %s", runtime.NumCPU(), cpu),
		"Linux " + strings.TrimSpace(string(kernel)),
		b.nexusVersion(),
	}
	for _, lang := range b.cfg.langs {
		parts = append(parts, toolVersion(lang))
	}
	if scriptNote != "" {
		b.note(scriptNote)
	}
	cfg := []string{"small calls " + b.callsLabel()}
	if !b.cfg.skip["concurrency"] {
		cfg = append(cfg, fmt.Sprintf("%d × sleep(%d ms), %d in flight", b.cfg.sleeps, b.cfg.sleepMs, b.cfg.inflight))
	}
	if !b.cfg.skip["large"] {
		var sizes []string
		for _, s := range b.cfg.sizesMB {
			sizes = append(sizes, mbLabel(s))
		}
		cfg = append(cfg, fmt.Sprintf("payloads %s MB, best of %d (%d from %d MB)", strings.Join(sizes, ", "), b.cfg.runs, b.cfg.runsBig, bigMB))
	}
	if !b.cfg.skip["startup"] {
		cfg = append(cfg, fmt.Sprintf("start-up median of %d", b.cfg.startupRuns))
	}
	if !b.cfg.skip["http"] {
		cfg = append(cfg, fmt.Sprintf("HTTP %d clients × %v", b.cfg.httpConns, b.cfg.httpTime))
	}
	if b.cfg.tiny {
		cfg = append(cfg, "-tiny: a smoke run, not a measurement")
	}
	// Others' work on a shared machine shows in the load average.
	cfg = append(cfg, fmt.Sprintf("load average %s at the start, %s at the end", b.loadStart, loadAverage()))
	return "nexus-bench: " + strings.Join(parts, " · ") + "\n\nconfiguration: " + strings.Join(cfg, " · ")
}

// loadAverage is the 1-minute load average.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

func (b *bench) callsLabel() string {
	var out []string
	for _, l := range b.cfg.langs {
		out = append(out, fmt.Sprintf("%s %d", l, b.cfg.calls.of(l)))
	}
	return strings.Join(out, ", ")
}

// nexusVersion names the measured binary, its Go, and a -race build (whose
// figures mean nothing).
func (b *bench) nexusVersion() string {
	v, _ := exec.Command(b.cfg.nexus, "--version").Output()
	s := strings.TrimSpace(string(v))
	if s == "" {
		s = "nexus (version unknown)"
	}
	if info, err := buildinfo.ReadFile(b.cfg.nexus); err == nil {
		s += " (" + info.GoVersion
		for _, st := range info.Settings {
			if st.Key == "-race" && st.Value == "true" {
				s += ", -race build: not representative"
				b.note("nexus is a -race build: its figures are for checking the driver, not for reading.")
			}
		}
		s += ")"
	}
	return s
}

// scriptNote is set by toolVersion when python3 is a script.
var scriptNote string

// toolVersion is the interpreter or compiler of a language, as found on
// PATH (which is where nexus finds it too).
func toolVersion(lang string) string {
	switch lang {
	case "py":
		path, err := lookPath("python3")
		if err != nil {
			return "python3 not found"
		}
		out, _ := exec.Command("python3", "--version").CombinedOutput()
		s := strings.TrimSpace(string(out)) + " (" + path
		// A pyenv shim is a shell script that execs the real python: it
		// adds tens of ms to every start, nexus's pools and the floor alike.
		if head, err := os.ReadFile(path); err == nil && bytes.HasPrefix(head, []byte("#!")) {
			s += ", a script"
			scriptNote = "python3 on PATH is a script (a pyenv shim?): every Python start, the pool's and the floor's, pays for it; PATH=/usr/bin:$PATH measures without it."
		}
		return s + ")"
	case "r":
		out, _ := exec.Command("Rscript", "--version").CombinedOutput()
		if m := regexp.MustCompile(`version (\S+)`).FindSubmatch(out); m != nil {
			return "R " + string(m[1])
		}
		return "R (version unknown)"
	default:
		out, err := exec.Command("g++", "-dumpfullversion").Output()
		if err != nil {
			return "g++ not found"
		}
		return "g++ " + strings.TrimSpace(string(out))
	}
}
