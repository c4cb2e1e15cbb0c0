//go:build linux

package execop

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// epoller is the Linux poller: an epoll instance over the two streams, as libuv uses on Linux. epoll lists
// ready descriptors in the order they became ready, which gives readiness order even when both streams became
// readable between two waits. The epoll descriptor itself is waited on through the Go runtime's netpoller
// (an epoll descriptor is pollable), so a waiting command holds no thread, and closing it wakes the wait.
type epoller struct {
	file   *os.File
	conn   syscall.RawConn
	fds    [2]int
	events [2]unix.EpollEvent
}

// newPoller watches the two output descriptors (stdout, stderr) for reading. It is a variable so tests can run
// the portable poll(2) poller too.
var newPoller = newEpoller

func newEpoller(fds [2]int) (poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	for stream, fd := range fds {
		event := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(stream)}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &event); err != nil {
			_ = unix.Close(epfd)
			return nil, fmt.Errorf("epoll_ctl: %w", err)
		}
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		_ = unix.Close(epfd)
		return nil, fmt.Errorf("set epoll non-blocking: %w", err)
	}
	// A non-blocking descriptor makes os.NewFile register it with the netpoller.
	file := os.NewFile(uintptr(epfd), "epoll")
	conn, err := file.SyscallConn()
	if err != nil {
		_ = file.Close()
		return nil, fmt.Errorf("epoll raw conn: %w", err)
	}
	return &epoller{file: file, conn: conn, fds: fds}, nil
}

func (p *epoller) wait(ready []int) ([]int, error) {
	n := 0
	var waitErr error
	err := p.conn.Read(func(fd uintptr) bool {
		n, waitErr = unix.EpollWait(int(fd), p.events[:], 0)
		if errors.Is(waitErr, unix.EINTR) {
			n, waitErr = 0, nil
		}
		// false: nothing is ready yet; the netpoller waits until the epoll descriptor is readable.
		return n > 0 || waitErr != nil
	})
	if err != nil {
		return ready, errStopped
	}
	if waitErr != nil {
		return ready, fmt.Errorf("epoll_wait: %w", waitErr)
	}
	for _, event := range p.events[:n] {
		ready = append(ready, int(event.Fd))
	}
	return ready, nil
}

func (p *epoller) forget(stream int) {
	_ = p.conn.Control(func(fd uintptr) {
		_ = unix.EpollCtl(int(fd), unix.EPOLL_CTL_DEL, p.fds[stream], nil)
	})
}

// stop closes the epoll descriptor: the runtime wakes a pending wait, and later ones fail.
func (p *epoller) stop() { _ = p.file.Close() }

func (p *epoller) close() { _ = p.file.Close() }
