//go:build windows

package listfiles

import (
	"errors"
	"os"
)

// openNoFollow opens a file for reading unless it is a symbolic link (checked first: Windows has no O_NOFOLLOW).
func openNoFollow(path string) (*os.File, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode()&os.ModeSymlink != 0 {
		return nil, errors.New("symbolic link")
	}
	return os.Open(path)
}
