//go:build unix

package sigreset

import (
	"os"
	"os/signal"
	"syscall"
)

// keepIgnoring hands the given signals to the Go runtime and drops them, so they stay ignored for the agent
// but are caught (thus reset to the default by exec) rather than ignored in the kernel.
func keepIgnoring(set uint64) {
	var sigs []os.Signal
	for sig := 1; sig <= 64; sig++ {
		if set&(1<<(sig-1)) != 0 && syscall.Signal(sig) != syscall.SIGKILL && syscall.Signal(sig) != syscall.SIGSTOP {
			sigs = append(sigs, syscall.Signal(sig))
		}
	}
	if len(sigs) > 0 {
		signal.Notify(drain, sigs...)
	}
}
