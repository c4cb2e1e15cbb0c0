//go:build linux

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// streamBuffer is the kernel buffer asked for on the agent's stdin and stdout (the default is 64 KiB for a pipe
// and about 208 KiB for a socket): fewer, larger transfers and wake-ups for bulk data.
const streamBuffer = 1 << 20

// enlargeBuffer asks the kernel for a larger buffer behind f: the pipe's capacity, or a socket's send buffer.
// The kernel may cap it (pipe-max-size, wmem_max) or refuse it (the user's pipe quota); either is harmless.
func enlargeBuffer(f *os.File, send bool) {
	fd := int(f.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, streamBuffer)
	case unix.S_IFSOCK:
		if send {
			_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, streamBuffer)
		}
	}
}

// pollHangUp is the extra poll event meaning the peer closed its end: POLLRDHUP, which Linux reports for a
// socket whose peer shut down writing.
const pollHangUp = unix.POLLRDHUP
