//go:build windows

package execop

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// findBash is NodeExecutionEnv's lookup after the Git Bash candidates: `where bash.exe`.
func findBash() string { return firstLineOf("where", "bash.exe") }

// canExecute is not consulted on Windows: the program search only asks for an existing file.
func canExecute(string) bool { return true }

// configureLookup hides the lookup helper's window.
func configureLookup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{HideWindow: true, CreationFlags: windows.CREATE_NO_WINDOW}
}
