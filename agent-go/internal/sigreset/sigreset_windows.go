//go:build windows

package sigreset

// ensure does nothing: Windows has no inherited signal dispositions or masks.
func ensure() {}
