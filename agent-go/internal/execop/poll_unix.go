//go:build unix

package execop

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// pollPoller waits with poll(2) on a blocked thread, woken at stop through a pipe of its own. poll reports
// readiness without an order, so streams that are readable at the same wait are read stdout first. It is the
// poller on POSIX systems other than Linux, and is built everywhere so that Linux tests cover it too.
type pollPoller struct {
	fds      [2]int
	watching [2]bool
	wakeR    *os.File
	wakeW    *os.File
	wakeFd   int
	once     sync.Once
}

func newPollPoller(fds [2]int) (poller, error) {
	wakeR, wakeW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("wake pipe: %w", err)
	}
	// Fd puts the read end in blocking mode; it is only polled, never read.
	return &pollPoller{fds: fds, watching: [2]bool{true, true}, wakeR: wakeR, wakeW: wakeW, wakeFd: int(wakeR.Fd())}, nil
}

// watch needs nothing: poll(2) takes the descriptors at every wait.
func (p *pollPoller) watch() error { return nil }

func (p *pollPoller) wait(ready []int) ([]int, error) {
	set := make([]unix.PollFd, 0, 3)
	streams := make([]int, 0, 2)
	for stream, on := range p.watching {
		if on {
			set = append(set, unix.PollFd{Fd: int32(p.fds[stream]), Events: unix.POLLIN})
			streams = append(streams, stream)
		}
	}
	set = append(set, unix.PollFd{Fd: int32(p.wakeFd), Events: unix.POLLIN})
	for {
		_, err := unix.Poll(set, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return ready, fmt.Errorf("poll: %w", err)
		}
		break
	}
	if set[len(set)-1].Revents != 0 {
		return ready, errStopped
	}
	for i, stream := range streams {
		if set[i].Revents != 0 {
			ready = append(ready, stream)
		}
	}
	return ready, nil
}

func (p *pollPoller) forget(stream int) { p.watching[stream] = false }

func (p *pollPoller) stop() {
	p.once.Do(func() { _, _ = p.wakeW.Write([]byte{0}) })
}

func (p *pollPoller) close() {
	_ = p.wakeR.Close()
	_ = p.wakeW.Close()
}
