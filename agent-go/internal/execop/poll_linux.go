//go:build linux

package execop

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// newPoller watches the two output descriptors (stdout, stderr) for reading. It is a variable so tests can run
// the portable poll(2) poller too.
var newPoller = newEpoller

// wakeEvent is the epoll data of the eventfd that stop signals.
const wakeEvent = 2

// epoller is the Linux poller: an epoll instance over the two streams, as libuv uses on Linux. epoll lists
// ready descriptors in the order they became ready, which gives readiness order even when both streams became
// readable between two waits. The wait blocks its thread (measured: faster end to end than waiting for the
// epoll descriptor through the runtime's netpoller, with no cost for 50 concurrent commands); an eventfd wakes
// it at stop.
type epoller struct {
	epfd   int
	wake   int
	fds    [2]int
	events [3]unix.EpollEvent
	once   sync.Once
}

func newEpoller(fds [2]int) (poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		_ = unix.Close(epfd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	p := &epoller{epfd: epfd, wake: wake, fds: fds}
	if err := p.add(wakeEvent, wake); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// watch adds stdout, then stderr: descriptors that are ready when added join epoll's ready list in that order.
func (p *epoller) watch() error {
	for stream, fd := range p.fds {
		if err := p.add(stream, fd); err != nil {
			return err
		}
	}
	return nil
}

func (p *epoller) add(data, fd int) error {
	event := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(data)}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &event); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

func (p *epoller) wait(ready []int) ([]int, error) {
	for {
		n, err := unix.EpollWait(p.epfd, p.events[:], -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return ready, fmt.Errorf("epoll_wait: %w", err)
		}
		for _, event := range p.events[:n] {
			if event.Fd == wakeEvent {
				return ready[:0], errStopped
			}
			ready = append(ready, int(event.Fd))
		}
		return ready, nil
	}
}

func (p *epoller) forget(stream int) {
	_ = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, p.fds[stream], nil)
}

func (p *epoller) stop() {
	p.once.Do(func() {
		one := [8]byte{1}
		_, _ = unix.Write(p.wake, one[:])
	})
}

func (p *epoller) close() {
	_ = unix.Close(p.epfd)
	_ = unix.Close(p.wake)
}
