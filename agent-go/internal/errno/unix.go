//go:build unix

package errno

import (
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// unixNames maps the errno values every Unix target has to libuv's names. Values libuv has no name for
// are reported as UNKNOWN, as pi-env does.
var unixNames = map[syscall.Errno]string{
	unix.E2BIG:           "E2BIG",
	unix.EACCES:          "EACCES",
	unix.EADDRINUSE:      "EADDRINUSE",
	unix.EADDRNOTAVAIL:   "EADDRNOTAVAIL",
	unix.EAFNOSUPPORT:    "EAFNOSUPPORT",
	unix.EAGAIN:          "EAGAIN",
	unix.EALREADY:        "EALREADY",
	unix.EBADF:           "EBADF",
	unix.EBUSY:           "EBUSY",
	unix.ECANCELED:       "ECANCELED",
	unix.ECONNABORTED:    "ECONNABORTED",
	unix.ECONNREFUSED:    "ECONNREFUSED",
	unix.ECONNRESET:      "ECONNRESET",
	unix.EDESTADDRREQ:    "EDESTADDRREQ",
	unix.EEXIST:          "EEXIST",
	unix.EFAULT:          "EFAULT",
	unix.EFBIG:           "EFBIG",
	unix.EHOSTDOWN:       "EHOSTDOWN",
	unix.EHOSTUNREACH:    "EHOSTUNREACH",
	unix.EILSEQ:          "EILSEQ",
	unix.EINTR:           "EINTR",
	unix.EINVAL:          "EINVAL",
	unix.EIO:             "EIO",
	unix.EISCONN:         "EISCONN",
	unix.EISDIR:          "EISDIR",
	unix.ELOOP:           "ELOOP",
	unix.EMFILE:          "EMFILE",
	unix.EMLINK:          "EMLINK",
	unix.EMSGSIZE:        "EMSGSIZE",
	unix.ENAMETOOLONG:    "ENAMETOOLONG",
	unix.ENETDOWN:        "ENETDOWN",
	unix.ENETUNREACH:     "ENETUNREACH",
	unix.ENFILE:          "ENFILE",
	unix.ENOBUFS:         "ENOBUFS",
	unix.ENODATA:         "ENODATA",
	unix.ENODEV:          "ENODEV",
	unix.ENOENT:          "ENOENT",
	unix.ENOMEM:          "ENOMEM",
	unix.ENOPROTOOPT:     "ENOPROTOOPT",
	unix.ENOSPC:          "ENOSPC",
	unix.ENOSYS:          "ENOSYS",
	unix.ENOTCONN:        "ENOTCONN",
	unix.ENOTDIR:         "ENOTDIR",
	unix.ENOTEMPTY:       "ENOTEMPTY",
	unix.ENOTSOCK:        "ENOTSOCK",
	unix.ENOTSUP:         "ENOTSUP",
	unix.ENOTTY:          "ENOTTY",
	unix.ENXIO:           "ENXIO",
	unix.EOVERFLOW:       "EOVERFLOW",
	unix.EPERM:           "EPERM",
	unix.EPIPE:           "EPIPE",
	unix.EPROTO:          "EPROTO",
	unix.EPROTONOSUPPORT: "EPROTONOSUPPORT",
	unix.EPROTOTYPE:      "EPROTOTYPE",
	unix.ERANGE:          "ERANGE",
	unix.EROFS:           "EROFS",
	unix.ESHUTDOWN:       "ESHUTDOWN",
	unix.ESOCKTNOSUPPORT: "ESOCKTNOSUPPORT",
	unix.ESPIPE:          "ESPIPE",
	unix.ESRCH:           "ESRCH",
	unix.ETIMEDOUT:       "ETIMEDOUT",
	unix.ETXTBSY:         "ETXTBSY",
	unix.EXDEV:           "EXDEV",
}

func init() {
	for errno, name := range platformNames {
		unixNames[errno] = name
	}
}

// fromSystem names a Unix errno the way libuv does.
func fromSystem(e syscall.Errno) string {
	if name, ok := unixNames[e]; ok {
		return name
	}
	return Unknown
}

// unknownText is the operating system's own text for an errno libuv cannot name, in lower case.
func unknownText(e syscall.Errno) string { return strings.ToLower(e.Error()) }
