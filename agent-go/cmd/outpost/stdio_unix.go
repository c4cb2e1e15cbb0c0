//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// hungUp reports whether every writer of f (a pipe or socket) is gone: poll says POLLHUP or POLLRDHUP even while
// unread bytes remain. Anything else (a terminal, an error) counts as not hung up.
func hungUp(f *os.File) bool {
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: pollHangUp}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLHUP|pollHangUp) != 0
}
