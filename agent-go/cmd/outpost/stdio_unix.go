//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// pollable returns f reopened in non-blocking mode, so reads and writes wait in Go's network poller instead of
// holding an OS thread in a blocking system call; f itself when it is not a pipe or socket (a terminal or file
// may be shared with other processes, whose view of O_NONBLOCK must not change).
func pollable(f *os.File) *os.File {
	fd := int(f.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return f
	}
	if kind := st.Mode & unix.S_IFMT; kind != unix.S_IFIFO && kind != unix.S_IFSOCK {
		return f
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}

// hungUp reports whether every writer of f (a pipe or socket) is gone: poll says POLLHUP or POLLRDHUP even while
// unread bytes remain. Anything else (a terminal, an error) counts as not hung up.
func hungUp(f *os.File) bool {
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: pollHangUp}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLHUP|pollHangUp) != 0
}
