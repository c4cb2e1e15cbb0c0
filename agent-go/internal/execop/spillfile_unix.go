//go:build unix

package execop

import "os"

// createSpillFile creates the spill file for appending; it must not exist yet.
func createSpillFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o666)
}
