//go:build !linux

package opscmd

// platformChecks: no checks beyond the common ones on this system yet.
func platformChecks() []func() check { return nil }
