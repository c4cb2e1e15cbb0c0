//go:build unix && !linux

package execop

// newPoller watches the two output descriptors (stdout, stderr) for reading with poll(2).
func newPoller(fds [2]int) (poller, error) { return newPollPoller(fds) }
