package execop

// DefaultShell is the shell a string command runs with when no shellPath is configured, chosen as for a command
// (on POSIX /bin/bash, `which bash`, then "sh" to be found on PATH). It is for diagnostics (`outpost doctor`).
func DefaultShell() (string, error) {
	shell, fail := selectShell(hostMachine())
	if fail != nil {
		return "", fail
	}
	return shell, nil
}
