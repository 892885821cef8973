package main

import "os"

// stateKey is the key that signs 2026-07-28 requestStates (issue 11): from
// NEXUS_STATE_KEY, so that every node behind one load balancer accepts the
// others' states, or nil for a random key of this process alone.
func stateKey() ([]byte, error) {
	k, ok := os.LookupEnv("NEXUS_STATE_KEY")
	if !ok {
		return nil, nil
	}
	if len(k) < 16 {
		return nil, usageErrorf("NEXUS_STATE_KEY is %d bytes long; a key that signs state needs at least 16 (e.g. `openssl rand -hex 32`)", len(k))
	}
	return []byte(k), nil
}
