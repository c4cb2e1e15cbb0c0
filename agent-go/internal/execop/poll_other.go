//go:build unix && !linux

package execop

// newPoller watches the two output descriptors (stdout, stderr) for reading with poll(2). It is a variable as
// on Linux, where tests switch pollers.
var newPoller = newPollPoller
