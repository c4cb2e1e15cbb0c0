//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package errno

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// platformNames are the libuv names of errno values only the BSD family (macOS included) has.
var platformNames = map[syscall.Errno]string{
	unix.EFTYPE: "EFTYPE",
}
