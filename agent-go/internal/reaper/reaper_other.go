//go:build !linux

package reaper

// Become reports false: only Linux has child subreapers.
func Become() bool { return false }

// Ticks is 0: without a subreaper there is nothing to date.
func Ticks() uint64 { return 0 }

// StartTicks reports nothing where processes are not dated.
func StartTicks(int) (uint64, bool) { return 0, false }

// KillTree does nothing here; commands are killed by their process group (POSIX) or job (Windows).
func KillTree(int) {}

// KillDescendants does nothing where there is no subreaper.
func KillDescendants() {}

func sweep(func(uint64) bool) {}
