//go:build windows

package execop

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// createSpillFile creates the spill file for appending, as libuv opens Node's append stream: sharing read,
// write and delete, so the file can be renamed or removed while the command still writes to it (Go's
// os.OpenFile does not share delete). It must not exist yet.
func createSpillFile(path string) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(name, windows.FILE_APPEND_DATA|windows.SYNCHRONIZE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.CREATE_NEW,
		windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}
