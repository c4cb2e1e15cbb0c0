//go:build !windows

package listfiles

import (
	"os"
	"syscall"
)

// OpenNoFollow opens a file for reading without following a final symbolic link (and without waiting on a FIFO).
func OpenNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// openDir opens a directory for listing as it is now: whatever was there when its parent was read may have been
// replaced meanwhile, and opening a FIFO without O_DIRECTORY would wait for a writer forever, with the walk
// (and its request) stuck behind it.
func openDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
}
