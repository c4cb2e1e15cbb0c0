//go:build unix && !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package errno

import "syscall"

// platformNames is empty on Unix systems without errno values of their own in libuv's table.
var platformNames = map[syscall.Errno]string{}
