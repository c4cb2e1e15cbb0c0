//go:build !linux && !windows

package sigreset

import (
	"os/signal"
	"syscall"
)

// ensure hands every ignored signal to the Go runtime so children get the default disposition. The start-up
// signal mask cannot be cleared here (no thread-mask call without cgo); children inherit it.
func ensure() {
	for sig := syscall.Signal(1); sig < 32; sig++ {
		if signal.Ignored(sig) {
			ignoredAtStart |= 1 << (uint(sig) - 1)
		}
	}
	keepIgnoring(ignoredAtStart)
}
