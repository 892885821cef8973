package manifest

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// nexus's own settings, read from the metadata objects morloc passes through
// untouched: a pool's metadata.runtime, metadata.workers and metadata.arrays,
// and a command's metadata.timeout.

// MaxWorkers bounds a pool's metadata.workers: more is a typo, not a plan.
const MaxWorkers = 256

// NoTimeout is Command.Timeout for "metadata.timeout": 0, a command that
// may run as long as it likes.
const NoTimeout time.Duration = -1

// The runtimes a pool can be written against: which driver nexus starts it
// with (docs/spec.md §2.2).
const (
	// RuntimeNexus is a pool written against nexus's own runtime (import
	// nexus, nexus.R, nexus.hpp): length-prefixed frames on descriptors 3
	// and 4 (docs/internals.md).
	RuntimeNexus = "nexus"
	// RuntimeMorloc is a pool the morloc compiler generated: morloc's
	// packet protocol over a Unix socket.
	RuntimeMorloc = "morloc"
)

// parseRuntime reads metadata.runtime, the rule that picks a pool's driver:
// "nexus" only when the pool says so, else "morloc", so that a program
// morloc compiled runs unchanged (morloc writes no runtime key). The rule
// looks at the manifest alone and never at the pool's behaviour.
func parseRuntime(raw json.RawMessage) (string, error) {
	if raw == nil || string(raw) == "null" {
		return RuntimeMorloc, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || (s != RuntimeNexus && s != RuntimeMorloc) {
		return "", fmt.Errorf("expected \"nexus\" (a pool written against nexus's runtime) or \"morloc\" (a pool morloc compiled, the default), got %s", raw)
	}
	return s, nil
}

// RuntimeHint is a sentence to add to the error of a pool that failed to
// start, saying how nexus chose its driver and how to choose the other
// one; "" for an unknown runtime.
func RuntimeHint(runtime string) string {
	switch runtime {
	case RuntimeMorloc:
		return "nexus started it as a pool morloc compiled, since its manifest entry has no \"metadata\": {\"runtime\": \"nexus\"}; " +
			"if it is written against nexus's runtime (import nexus, nexus.R or nexus.hpp), add that key to the pool in the manifest"
	case RuntimeNexus:
		return "nexus started it as a pool written against nexus's runtime, since its manifest entry says \"metadata\": {\"runtime\": \"nexus\"}; " +
			"if morloc compiled it, remove that key"
	}
	return ""
}

// parseWorkers reads metadata.workers: how many processes a pool runs
// (docs/pools.md, "Workers"); 0 when it does not say.
func parseWorkers(raw json.RawMessage) (int, error) {
	if raw == nil || string(raw) == "null" {
		return 0, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil || n < 1 || n > MaxWorkers {
		return 0, fmt.Errorf("expected an integer from 1 to %d, got %s", MaxWorkers, raw)
	}
	return n, nil
}

// parseArrays reads metadata.arrays: "numpy" asks for numeric list
// arguments as numpy arrays (docs/pools.md, "Values");
// "" when it does not say.
func parseArrays(raw json.RawMessage) (string, error) {
	if raw == nil || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || s != "numpy" {
		return "", fmt.Errorf("expected \"numpy\", got %s", raw)
	}
	return s, nil
}

// parseTimeout reads metadata.timeout: a Go duration string ("90s", "2m") or
// a number of seconds; 0 is NoTimeout; absent is 0 (the server's default).
func parseTimeout(raw json.RawMessage) (time.Duration, error) {
	if raw == nil || string(raw) == "null" {
		return 0, nil
	}
	bad := fmt.Errorf("expected a duration such as \"90s\" or a number of seconds (0 for none), got %s", raw)
	var d time.Duration
	var text string
	var seconds float64
	switch {
	case json.Unmarshal(raw, &text) == nil:
		var err error
		if d, err = time.ParseDuration(text); err != nil {
			return 0, bad
		}
	case json.Unmarshal(raw, &seconds) == nil:
		if seconds > float64(math.MaxInt64/int64(time.Second)) {
			return 0, bad
		}
		d = time.Duration(seconds * float64(time.Second))
	default:
		return 0, bad
	}
	switch {
	case d < 0:
		return 0, bad
	case d == 0:
		return NoTimeout, nil
	}
	return d, nil
}
