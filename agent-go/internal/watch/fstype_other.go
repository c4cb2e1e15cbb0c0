//go:build !linux && !windows

package watch

// pollsByDefault is false: Durable checks file system types on Linux and Android only.
func pollsByDefault([]string) bool { return false }
