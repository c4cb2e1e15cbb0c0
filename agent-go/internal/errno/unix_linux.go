package errno

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// platformNames are the libuv names of errno values only Linux (and Android) has.
var platformNames = map[syscall.Errno]string{
	unix.ENONET:    "ENONET",
	unix.EREMOTEIO: "EREMOTEIO",
	unix.EUNATCH:   "EUNATCH",
}
