//go:build windows

package listfiles

import (
	"errors"
	"os"
)

// OpenNoFollow opens a file for reading unless it is a symbolic link (checked first: Windows has no O_NOFOLLOW).
func OpenNoFollow(path string) (*os.File, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode()&os.ModeSymlink != 0 {
		return nil, errors.New("symbolic link")
	}
	return os.Open(path)
}

// openDir opens a directory for listing (Windows has no FIFOs that an open could wait on).
func openDir(path string) (*os.File, error) {
	return os.Open(path)
}
