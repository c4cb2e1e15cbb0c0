//go:build !windows

package listfiles

import (
	"os"
	"syscall"
)

// openNoFollow opens a file for reading without following a final symbolic link.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
