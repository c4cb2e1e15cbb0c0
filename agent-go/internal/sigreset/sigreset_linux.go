//go:build linux

package sigreset

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

func ensure() {
	if value, ok := os.LookupEnv(marker); ok {
		// Second start: the state is clean; only remember what the launcher ignored.
		_ = os.Unsetenv(marker)
		reexecuted = true
		ignoredAtStart, _ = strconv.ParseUint(value, 16, 64)
		keepIgnoring(ignoredAtStart)
		resetUncatchable()
		return
	}
	// Children get the forking thread's current mask, and every Go thread runs with the start-up mask minus
	// the signals the runtime needs, so this thread's mask is what children would get. Ignored signals the
	// runtime did not take over show in SigIgn; taking them over fixes them without an exec.
	if ignored, err := statusMask("SigIgn"); err == nil {
		ignoredAtStart = ignored
	}
	keepIgnoring(ignoredAtStart)
	resetUncatchable()
	if blocked, err := threadMask(); err == nil && blocked != 0 {
		reexec()
		// Only reached when the exec failed: dispositions are fixed, the mask is not.
	}
}

// reexec replaces the process with a fresh copy of itself started from a thread with an empty mask.
func reexec() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var empty, old unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &empty, &old); err != nil {
		return
	}
	if err := os.Setenv(marker, strconv.FormatUint(ignoredAtStart, 16)); err == nil {
		_ = unix.Exec("/proc/self/exe", os.Args, os.Environ())
	}
	_ = os.Unsetenv(marker)
	_ = unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
}

// resetUncatchable sets to SIG_DFL every signal that is still ignored although keepIgnoring asked for it:
// the few the Go runtime refuses to handle (signals 32-34, used by C libraries' threading). Nothing in a
// static Go agent sends them, so the agent loses nothing by their default action.
func resetUncatchable() {
	still, err := statusMask("SigIgn")
	if err != nil {
		return
	}
	for sig := 1; sig <= 64; sig++ {
		if still&(1<<(sig-1)) == 0 || sig == int(unix.SIGKILL) || sig == int(unix.SIGSTOP) {
			continue
		}
		// An all-zero kernel sigaction is {SIG_DFL, no flags, empty mask} on every Linux ABI we target.
		var action [8]uint64
		_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&action)), 0, 8, 0, 0)
	}
}

// threadMask returns the signal mask of the calling thread (bit n-1 for signal n). The main thread's SigBlk in
// /proc/self/status is no substitute: it reads as "all blocked" while that thread is creating another.
func threadMask() (uint64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, nil, &set); err != nil {
		return 0, err
	}
	mask := uint64(set.Val[0])
	if unsafe.Sizeof(set.Val[0]) == 4 {
		mask |= uint64(set.Val[1]) << 32
	}
	return mask, nil
}

// statusMask reads a hex signal mask line ("SigIgn", "SigBlk") of /proc/self/status.
func statusMask(name string) (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if value, ok := strings.CutPrefix(scanner.Text(), name+":"); ok {
			return strconv.ParseUint(strings.TrimSpace(value), 16, 64)
		}
	}
	if err := scanner.Err(); err != nil {
		return 0, err
	}
	return 0, os.ErrNotExist
}
