//go:build linux

package reaper

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// userHZ is the unit of the start times in /proc/<pid>/stat (USER_HZ, 100 on every Linux ABI).
const userHZ = 100

// Become makes this process the child subreaper of its descendants; it reports whether that worked.
func Become() bool {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
}

// Ticks is the time since boot in the unit of process start times.
func Ticks() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	return uint64(ts.Sec)*userHZ + uint64(ts.Nsec)/(1e9/userHZ)
}

// process is what /proc/<pid>/stat says about a process.
type process struct {
	zombie     bool
	stopped    bool
	parent     int
	startTicks uint64
}

// stat reads a process's state and start time; ok is false once it is gone.
func stat(pid int) (process, bool) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return process{}, false
	}
	// The command name may contain anything, so the fields are counted from its closing parenthesis:
	// field 3 (state) comes first, then field 4 (ppid), and field 22 (starttime) 19 fields after the state.
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return process{}, false
	}
	fields := strings.Fields(string(raw[end+1:]))
	if len(fields) < 20 {
		return process{}, false
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return process{}, false
	}
	parent, err := strconv.Atoi(fields[1])
	if err != nil {
		return process{}, false
	}
	state := fields[0]
	return process{zombie: state == "Z", stopped: state == "T" || state == "t", parent: parent, startTicks: start}, true
}

// StartTicks is when a process started, in Ticks; ok is false once it is gone.
func StartTicks(pid int) (uint64, bool) {
	p, ok := stat(pid)
	return p.startTicks, ok
}

// children lists the children of pid, across all its threads (a child belongs to the thread that forked it,
// and an orphan to whichever thread of its new parent the kernel picked). Kernels without the children files
// (CONFIG_PROC_CHILDREN) are served by a scan of every process's parent.
func children(pid int) []int {
	lists, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	if len(lists) == 0 {
		return childrenByScan(pid)
	}
	var pids []int
	for _, list := range lists {
		raw, err := os.ReadFile(list)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(raw)) {
			if child, err := strconv.Atoi(field); err == nil {
				pids = append(pids, child)
			}
		}
	}
	return pids
}

// childrenByScan lists the processes whose parent is pid by reading every /proc/<pid>/stat.
func childrenByScan(parent int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, entry := range entries {
		pid, err := strconv.Atoi(entry.Name())
		if err != nil {
			continue
		}
		if p, ok := stat(pid); ok && p.parent == parent {
			pids = append(pids, pid)
		}
	}
	return pids
}

// KillTree sends SIGKILL to pid and every descendant it has. The tree is frozen first, parents before
// children: each process gets SIGSTOP and is listed only once it has stopped, so none can fork a new child or
// lose its children to re-parenting while the tree is walked. Then every frozen process is killed.
func KillTree(pid int) {
	var frozen []int
	freeze(pid, &frozen, 0)
	for _, p := range frozen {
		_ = unix.Kill(p, unix.SIGKILL)
	}
}

// maxTreeSize bounds a frozen tree, so that a fork bomb cannot hold the caller forever.
const maxTreeSize = 1 << 16

// freeze stops pid, waits (bounded) until it has stopped, and freezes its children in turn.
func freeze(pid int, frozen *[]int, depth int) {
	if len(*frozen) >= maxTreeSize || depth > 1024 || unix.Kill(pid, unix.SIGSTOP) != nil {
		return
	}
	*frozen = append(*frozen, pid)
	waitStopped(pid)
	for _, child := range children(pid) {
		freeze(child, frozen, depth+1)
	}
}

// stopWait bounds how long freeze waits for one process to stop (a process in an uninterruptible sleep stops
// only when it wakes; its children are then listed as they are).
const stopWait = 100 * time.Millisecond

// waitStopped polls /proc until pid is stopped, a zombie or gone.
func waitStopped(pid int) {
	for deadline := time.Now().Add(stopWait); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
		p, ok := stat(pid)
		if !ok || p.zombie || p.stopped {
			return
		}
	}
}

func sweep(doomed func(startTicks uint64) bool) {
	self := os.Getpid()
	for _, pid := range children(self) {
		if isOwn(pid) {
			continue
		}
		p, ok := stat(pid)
		switch {
		case !ok:
		case p.zombie:
			var status unix.WaitStatus
			_, _ = unix.Wait4(pid, &status, unix.WNOHANG, nil)
		case doomed(p.startTicks):
			KillTree(pid)
		}
	}
}

// KillDescendants kills every descendant of this process, adopted or not, and reaps them, until none is
// left (bounded: a descendant that keeps forking cannot hold the caller forever). The guardian uses it once
// the agent it guards has exited.
func KillDescendants() {
	self := os.Getpid()
	for range 100 {
		kids := children(self)
		if len(kids) == 0 {
			return
		}
		for _, pid := range kids {
			KillTree(pid)
		}
		for _, pid := range kids {
			var status unix.WaitStatus
			_, _ = unix.Wait4(pid, &status, 0, nil)
		}
	}
}
