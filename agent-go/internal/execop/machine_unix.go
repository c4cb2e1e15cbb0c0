//go:build unix

package execop

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// findBash is Durable's lookup after /bin/bash: `which bash`.
func findBash() string { return firstLineOf("which", "bash") }

func canExecute(path string) bool { return unix.Access(path, unix.X_OK) == nil }

// configureLookup puts the lookup helper in its own group, killed as a whole on timeout.
func configureLookup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error {
		if err := unix.Kill(-cmd.Process.Pid, unix.SIGKILL); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
}
