//go:build !linux

package morlocwire

// dropPages does nothing where syscall has no madvise (macOS, for the
// bundle's cross-built nexus): the pages go when the volume is unmapped.
func dropPages([]byte) {}
