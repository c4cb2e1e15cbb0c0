//go:build !linux

package fsops

import "os"

// SameHostFeatures is empty off Linux: without /proc/<pid>/fd a client cannot reopen the agent's descriptors.
var SameHostFeatures []string

// sameHostFd never offers a descriptor off Linux.
func sameHostFd(*os.File) (int, bool) { return 0, false }
