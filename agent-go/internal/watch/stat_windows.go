package watch

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// statEntry is the snapshot entry of path, following a final link or not. The identity is the volume serial
// number and file index (as pi-env's daemon uses): NTFS "tunneling" gives a file created under a recently
// removed name the old file's creation time, so times cannot identify files.
func statEntry(path string, follow bool) (entry, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return entry{}, err
	}
	flags := uint32(windows.FILE_FLAG_BACKUP_SEMANTICS)
	if !follow {
		flags |= windows.FILE_FLAG_OPEN_REPARSE_POINT
	}
	h, err := windows.CreateFile(name, 0,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, flags, 0)
	if err != nil {
		return entry{}, err
	}
	defer windows.CloseHandle(h)
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return entry{}, err
	}
	kind := kindFile
	switch {
	case info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 && !follow:
		kind = kindSymlink
	case info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		kind = kindDirectory
	}
	mtime := syscall.Filetime(info.LastWriteTime)
	return entry{
		kind:    kind,
		dev:     uint64(info.VolumeSerialNumber),
		ino:     uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow),
		size:    int64(info.FileSizeHigh)<<32 | int64(info.FileSizeLow),
		mtimeMs: float64(mtime.Nanoseconds()) / 1e6,
	}, nil
}

func isPermissionError(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}

func isNotFound(err error) bool {
	return errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, windows.ERROR_PATH_NOT_FOUND)
}

func isSkippableDirError(err error) bool {
	return isPermissionError(err) || isNotFound(err) || errors.Is(err, windows.ERROR_DIRECTORY)
}

func isIgnorableWatchError(err error) bool { return isPermissionError(err) || isNotFound(err) }

// errNoWatches is the failure the test hook injects.
var errNoWatches error = windows.ERROR_NOT_ENOUGH_QUOTA

// openDir opens a directory to list it (Windows has no FIFOs that an open could wait on).
func openDir(path string) (*os.File, error) { return os.Open(path) }

// openRegular opens a file to hash it.
func openRegular(path string) (*os.File, error) { return os.Open(path) }
