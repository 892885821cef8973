package program

import "os"

// stateKey is the key that signs the requestStates of the stateless
// protocol (docs/spec.md §4.3): from NEXUS_STATE_KEY, so that every node
// behind one load balancer accepts the others' states, or nil for a random
// key of this process alone.
func stateKey() ([]byte, error) {
	k, ok := os.LookupEnv("NEXUS_STATE_KEY")
	if !ok {
		return nil, nil
	}
	if len(k) < 16 {
		return nil, Usagef("NEXUS_STATE_KEY is %d bytes long; a key that signs state needs at least 16 (e.g. `openssl rand -hex 32`)", len(k))
	}
	return []byte(k), nil
}
