//go:build linux

package fsops

import (
	"os"

	"golang.org/x/sys/unix"
)

// SameHostFeatures are the hello features of the same-host shortcut: on Linux a client on this machine, running
// as a user allowed to open /proc/<agent pid>/fd/<n>, may read and write an open regular file's bytes through its
// own descriptor instead of through the protocol (spec/protocol.md, "handle.fd").
var SameHostFeatures = []string{"handle.fd"}

// sameHostFd is the descriptor number of file when it is a regular file, for a reply's "fd" field. Other kinds
// (FIFOs, devices, directories) are not offered: reopening them through /proc is not the same file position or
// the same stream.
func sameHostFd(file *os.File) (int, bool) {
	raw, err := file.SyscallConn()
	if err != nil {
		return 0, false
	}
	fd, regular := -1, false
	// Control, unlike Fd(), leaves the descriptor's blocking mode alone.
	_ = raw.Control(func(descriptor uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(descriptor), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			fd, regular = int(descriptor), true
		}
	})
	return fd, regular
}
