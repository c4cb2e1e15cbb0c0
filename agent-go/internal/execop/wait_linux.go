//go:build linux

package execop

import (
	"errors"

	"golang.org/x/sys/unix"
)

// waitExit blocks until the process exited WITHOUT reaping it: the zombie keeps its pid (the group id)
// reserved, so killing the group during the post-exit grace can never hit a recycled pid. exitCode reaps.
func (c *child) waitExit() {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, c.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}
