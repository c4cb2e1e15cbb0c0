//go:build windows

// Command taskkill is the stand-in of `make test-windows` for Windows' taskkill.exe, whose Wine 8 version
// refuses `/T`: without it, timeouts, aborts and cleanup of both envs kill nothing under Wine. It supports only
// what the envs run, `taskkill /F /T /PID <pid>` (several /PID allowed): it terminates each process and all of
// its descendants, found through a Toolhelp snapshot. Test tooling only; never shipped.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

func main() {
	roots, err := parse(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "taskkill stand-in:", err)
		os.Exit(1)
	}
	children, err := childrenByParent()
	if err != nil {
		fmt.Fprintln(os.Stderr, "taskkill stand-in:", err)
		os.Exit(1)
	}
	status := 0
	for _, root := range roots {
		if !killTree(root, children, map[uint32]bool{}) {
			fmt.Fprintf(os.Stderr, "ERROR: The process with PID %d could not be terminated.\n", root)
			status = 128
		}
	}
	os.Exit(status)
}

// parse accepts /F, /T and /PID <n> in any order and case; the tree is always killed, forcibly.
func parse(args []string) ([]uint32, error) {
	var pids []uint32
	for i := 0; i < len(args); i++ {
		switch strings.ToUpper(args[i]) {
		case "/F", "/T":
		case "/PID":
			if i+1 >= len(args) {
				return nil, fmt.Errorf("/PID needs a value")
			}
			i++
			pid, err := strconv.ParseUint(args[i], 10, 32)
			if err != nil {
				return nil, fmt.Errorf("bad pid %q: %w", args[i], err)
			}
			pids = append(pids, uint32(pid))
		default:
			return nil, fmt.Errorf("unsupported argument %q", args[i])
		}
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("usage: taskkill /F /T /PID <pid>")
	}
	return pids, nil
}

// childrenByParent lists every process's children from one snapshot.
func childrenByParent() (map[uint32][]uint32, error) {
	snapshot, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, fmt.Errorf("process snapshot: %w", err)
	}
	defer windows.CloseHandle(snapshot)
	children := map[uint32][]uint32{}
	entry := windows.ProcessEntry32{Size: uint32(unsafe.Sizeof(windows.ProcessEntry32{}))}
	for err = windows.Process32First(snapshot, &entry); err == nil; err = windows.Process32Next(snapshot, &entry) {
		if entry.ProcessID != entry.ParentProcessID {
			children[entry.ParentProcessID] = append(children[entry.ParentProcessID], entry.ProcessID)
		}
	}
	return children, nil
}

// killTree terminates the descendants first (so none is re-parented away), then the process itself.
func killTree(pid uint32, children map[uint32][]uint32, seen map[uint32]bool) bool {
	if seen[pid] {
		return true
	}
	seen[pid] = true
	for _, child := range children[pid] {
		killTree(child, children, seen)
	}
	handle, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(handle)
	return windows.TerminateProcess(handle, 1) == nil
}
