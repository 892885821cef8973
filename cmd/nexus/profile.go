package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"
)

// Environment variables for measuring and tuning nexus; none is needed in
// normal use (docs/performance.md).
const (
	// envCPUProfile names a file that receives a pprof CPU profile of the
	// whole run, written when nexus exits normally.
	envCPUProfile = "NEXUS_CPUPROFILE"
	// envMemProfile names a file that receives a pprof heap profile
	// (allocations since start, and what is live) when nexus exits
	// normally.
	envMemProfile = "NEXUS_MEMPROFILE"
)

// startProfile starts the CPU profile NEXUS_CPUPROFILE asks for and
// returns what stops it, and writes the heap profile NEXUS_MEMPROFILE
// asks for.
func startProfile() func() {
	stopCPU := startCPUProfile()
	mem := os.Getenv(envMemProfile)
	if mem == "" {
		return stopCPU
	}
	return func() {
		stopCPU()
		f, err := os.Create(mem)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "nexus: %s: %v\n", envMemProfile, err)
		}
	}
}

func startCPUProfile() func() {
	path := os.Getenv(envCPUProfile)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "nexus: %s: %v\n", envCPUProfile, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// gcPercent is nexus's garbage collection target, unless GOGC says
// otherwise: Go's default (100) lets a server's small calls grow the heap
// by 4 MiB of garbage before the first collection, a third of nexus's
// memory; large calls collect their own garbage as they go (mcp's
// collectIfLarge).
const gcPercent = 50

// tuneRuntime sets the collector's target.
func tuneRuntime() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
