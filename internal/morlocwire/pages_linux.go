package morlocwire

import "syscall"

// dropPages tells the kernel nexus is done with these pages of a mapping:
// copied out, they need not count against nexus's memory (the file in
// /dev/shm keeps its data).
func dropPages(b []byte) {
	_ = syscall.Madvise(b, syscall.MADV_DONTNEED)
}
