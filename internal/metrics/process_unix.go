//go:build unix

package metrics

import "syscall"

// softLimit is the soft limit of a resource (RLIMIT_NOFILE, RLIMIT_AS).
func softLimit(resource int) (float64, bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(resource, &l); err != nil {
		return 0, false
	}
	return float64(l.Cur), true
}

// limitFamilies are the open files' and the address space's soft limits.
func limitFamilies() []family {
	var fams []family
	if n, ok := softLimit(syscall.RLIMIT_NOFILE); ok {
		fams = append(fams, procMaxFDs.family(n))
	}
	if n, ok := softLimit(syscall.RLIMIT_AS); ok {
		fams = append(fams, procMaxVSize.family(n))
	}
	return fams
}
