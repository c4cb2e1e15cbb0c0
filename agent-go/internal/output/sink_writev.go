//go:build darwin || linux || openbsd

package output

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxVec stays below every platform's IOV_MAX (1024 on Linux and the BSDs).
const maxVec = 512

// vectorSink writes a batch to a file descriptor with writev, so large payloads go out without being copied.
type vectorSink struct {
	conn syscall.RawConn
}

// newVectorSink returns a vectored writer for an *os.File, or nil for any other writer.
func newVectorSink(w io.Writer) sink {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	conn, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return &vectorSink{conn: conn}
}

func (v *vectorSink) writeVec(parts [][]byte) error {
	var werr error
	err := v.conn.Write(func(fd uintptr) bool {
		for len(parts) > 0 {
			n, err := unix.Writev(int(fd), parts[:min(len(parts), maxVec)])
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.EAGAIN):
				// A non-blocking descriptor is full: wait in the poller, then go on where we stopped.
				return false
			case err != nil:
				werr = &os.PathError{Op: "writev", Path: "stdout", Err: err}
				return true
			}
			parts = advance(parts, n)
		}
		return true
	})
	if werr != nil {
		return werr
	}
	return err
}

// advance drops the first n written bytes from parts.
func advance(parts [][]byte, n int) [][]byte {
	for n > 0 && len(parts) > 0 {
		if n < len(parts[0]) {
			parts[0] = parts[0][n:]
			return parts
		}
		n -= len(parts[0])
		parts = parts[1:]
	}
	for len(parts) > 0 && len(parts[0]) == 0 {
		parts = parts[1:]
	}
	return parts
}
