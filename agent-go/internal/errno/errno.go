// Package errno turns operating-system errors into the failures Node reports for the same system call: a
// libuv code name (ENOENT, EISDIR, ...), libuv's description text and Node's message format
// "<CODE>: <description>, <syscall> '<path>'".
//
// Only codes are contract (the client maps them to FileError codes); messages imitate Node so that tools show
// the same text.
package errno

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// Unknown is the code reported for an error libuv has no name for.
const Unknown = "UNKNOWN"

// descriptions are libuv's uv_strerror texts, keyed by code name (taken from Node 20's
// util.getSystemErrorMap(); ECHARSET and EFTYPE are the names libuv uses on Windows and BSD).
var descriptions = map[string]string{
	"E2BIG":           "argument list too long",
	"EACCES":          "permission denied",
	"EADDRINUSE":      "address already in use",
	"EADDRNOTAVAIL":   "address not available",
	"EAFNOSUPPORT":    "address family not supported",
	"EAGAIN":          "resource temporarily unavailable",
	"EALREADY":        "connection already in progress",
	"EBADF":           "bad file descriptor",
	"EBUSY":           "resource busy or locked",
	"ECANCELED":       "operation canceled",
	"ECHARSET":        "invalid Unicode character",
	"ECONNABORTED":    "software caused connection abort",
	"ECONNREFUSED":    "connection refused",
	"ECONNRESET":      "connection reset by peer",
	"EDESTADDRREQ":    "destination address required",
	"EEXIST":          "file already exists",
	"EFAULT":          "bad address in system call argument",
	"EFBIG":           "file too large",
	"EFTYPE":          "inappropriate file type or format",
	"EHOSTDOWN":       "host is down",
	"EHOSTUNREACH":    "host is unreachable",
	"EILSEQ":          "illegal byte sequence",
	"EINTR":           "interrupted system call",
	"EINVAL":          "invalid argument",
	"EIO":             "i/o error",
	"EISCONN":         "socket is already connected",
	"EISDIR":          "illegal operation on a directory",
	"ELOOP":           "too many symbolic links encountered",
	"EMFILE":          "too many open files",
	"EMLINK":          "too many links",
	"EMSGSIZE":        "message too long",
	"ENAMETOOLONG":    "name too long",
	"ENETDOWN":        "network is down",
	"ENETUNREACH":     "network is unreachable",
	"ENFILE":          "file table overflow",
	"ENOBUFS":         "no buffer space available",
	"ENODATA":         "no data available",
	"ENODEV":          "no such device",
	"ENOENT":          "no such file or directory",
	"ENOMEM":          "not enough memory",
	"ENONET":          "machine is not on the network",
	"ENOPROTOOPT":     "protocol not available",
	"ENOSPC":          "no space left on device",
	"ENOSYS":          "function not implemented",
	"ENOTCONN":        "socket is not connected",
	"ENOTDIR":         "not a directory",
	"ENOTEMPTY":       "directory not empty",
	"ENOTSOCK":        "socket operation on non-socket",
	"ENOTSUP":         "operation not supported on socket",
	"ENOTTY":          "inappropriate ioctl for device",
	"ENXIO":           "no such device or address",
	"EOF":             "end of file",
	"EOVERFLOW":       "value too large for defined data type",
	"EPERM":           "operation not permitted",
	"EPIPE":           "broken pipe",
	"EPROTO":          "protocol error",
	"EPROTONOSUPPORT": "protocol not supported",
	"EPROTOTYPE":      "protocol wrong type for socket",
	"ERANGE":          "result too large",
	"EREMOTEIO":       "remote I/O error",
	"EROFS":           "read-only file system",
	"ESHUTDOWN":       "cannot send after transport endpoint shutdown",
	"ESOCKTNOSUPPORT": "socket type not supported",
	"ESPIPE":          "invalid seek",
	"ESRCH":           "no such process",
	"ETIMEDOUT":       "connection timed out",
	"ETXTBSY":         "text file is busy",
	"EUNATCH":         "protocol driver not attached",
	"EXDEV":           "cross-device link not permitted",
	"UNKNOWN":         "unknown error",
}

// Description returns libuv's description of a code name, or "" when libuv has none.
func Description(code string) string { return descriptions[code] }

// Code returns the libuv code name of err: the name of the system error it wraps, EBADF for a file that
// was already closed, the code of a *proto.Failure, or UNKNOWN.
func Code(err error) string {
	if err == nil {
		return ""
	}
	var failure *proto.Failure
	if errors.As(err, &failure) {
		return failure.Code
	}
	var own Errno
	if errors.As(err, &own) {
		return string(own)
	}
	var sys syscall.Errno
	if errors.As(err, &sys) {
		return fromSystem(sys)
	}
	if errors.Is(err, os.ErrClosed) || errors.Is(err, fs.ErrClosed) {
		return "EBADF"
	}
	return Unknown
}

// Is reports whether err carries the given code name.
func Is(err error, code string) bool { return err != nil && Code(err) == code }

// describe returns the description used in a message for err's code: libuv's text, or the operating system's
// own text (lower case) for errors libuv cannot name.
func describe(code string, err error) string {
	if code != Unknown {
		if d, ok := descriptions[code]; ok {
			return d
		}
	}
	var sys syscall.Errno
	if errors.As(err, &sys) {
		return unknownText(sys)
	}
	if err != nil {
		return strings.ToLower(err.Error())
	}
	return descriptions[Unknown]
}

// Fail builds the failure Node reports when the system call `syscall` on `path` fails with err:
// "<CODE>: <description>, <syscall> '<path>'". A *proto.Failure passes through unchanged.
func Fail(err error, syscall, path string) *proto.Failure {
	if f := asFailure(err); f != nil {
		return f
	}
	code := Code(err)
	return onPath(code, describe(code, err), syscall, path)
}

// FailHandle builds the failure of a call on an open file, which Node reports without a path:
// "<CODE>: <description>, <syscall>" (e.g. "EISDIR: illegal operation on a directory, read").
func FailHandle(err error, syscall string) *proto.Failure {
	if f := asFailure(err); f != nil {
		return f
	}
	code := Code(err)
	return &proto.Failure{Code: code, Message: code + ": " + describe(code, err) + ", " + syscall, Syscall: syscall}
}

// FailRename builds a rename failure: the message names both paths ("'<from>' -> '<to>'"), `path` is the
// source and `dest` the destination, as on Node's error.
func FailRename(err error, from, to string) *proto.Failure {
	if f := asFailure(err); f != nil {
		return f
	}
	code := Code(err)
	f := onPath(code, describe(code, err), "rename", from)
	f.Message += " -> '" + to + "'"
	f.Extra = map[string]any{"dest": to}
	return f
}

// New builds a failure with a code chosen by the caller (libuv's code where the system call reported
// another, e.g. ENOTDIR from a recursive mkdir through a file), in Node's message format.
func New(code, syscall, path string) *proto.Failure {
	return onPath(code, describe(code, nil), syscall, path)
}

// onPath is the failure of a system call on a path, in Node's format "<CODE>: <description>, <syscall> '<path>'".
func onPath(code, description, syscall, path string) *proto.Failure {
	return &proto.Failure{
		Code:    code,
		Message: code + ": " + description + ", " + syscall + " '" + path + "'",
		Syscall: syscall,
		Path:    path,
		HasPath: true,
	}
}

// Errno is an error carrying only a libuv code name, for conditions the agent detects itself before or
// instead of a system call (e.g. EISDIR when fsync is asked for a directory).
type Errno string

// Error implements error.
func (e Errno) Error() string { return string(e) + ": " + describe(string(e), nil) }

func asFailure(err error) *proto.Failure {
	var failure *proto.Failure
	if errors.As(err, &failure) {
		return failure
	}
	return nil
}
