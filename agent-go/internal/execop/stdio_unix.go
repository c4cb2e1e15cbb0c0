//go:build unix

package execop

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// socketPair returns a connected pair of UNIX stream sockets, which is what libuv gives a child for a "pipe"
// stdio (Node's exec: stdout and stderr; spec X13): the agent's end non-blocking, the child's end blocking, both
// close-on-exec (the child gets its end through dup2).
func socketPair() (parent int, child *os.File, err error) {
	// The fork lock keeps a concurrent fork from inheriting the sockets before they are close-on-exec
	// (SOCK_CLOEXEC does not exist everywhere, e.g. on macOS).
	syscall.ForkLock.RLock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fds[0])
		unix.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, nil, fmt.Errorf("socketpair: %w", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		_ = unix.Close(fds[0])
		_ = unix.Close(fds[1])
		return -1, nil, fmt.Errorf("set socket non-blocking: %w", err)
	}
	return fds[0], os.NewFile(uintptr(fds[1]), "stdio"), nil
}

// commandOutputs are the agent's ends of a command's stdout and stderr and the poller over them.
type commandOutputs struct {
	fds    [2]int
	poller poller
}

// newOutputs creates the stdout and stderr socket pairs and the poller; it returns the child's ends, which the
// caller closes once the child has them.
func newOutputs() (*commandOutputs, [2]*os.File, error) {
	var out commandOutputs
	var childEnds [2]*os.File
	for stream := range out.fds {
		parent, childEnd, err := socketPair()
		if err != nil {
			for i := range stream {
				_ = unix.Close(out.fds[i])
				_ = childEnds[i].Close()
			}
			return nil, childEnds, err
		}
		out.fds[stream], childEnds[stream] = parent, childEnd
	}
	p, err := newPoller(out.fds)
	if err != nil {
		out.closeFds()
		closeAll(childEnds[:]...)
		return nil, childEnds, err
	}
	out.poller = p
	return &out, childEnds, nil
}

// closeFds closes the agent's ends; the poller must be done with them.
func (o *commandOutputs) closeFds() {
	for _, fd := range o.fds {
		_ = unix.Close(fd)
	}
}
