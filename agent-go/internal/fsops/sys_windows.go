//go:build windows

package fsops

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

const onWindows = true

// infoFromFileInfo builds an Info from Go's Windows file information: dev 0, ino the creation time (as
// pi-env does; the watcher uses a better identity), negative mtimes before 1970.
func infoFromFileInfo(name string, fi fs.FileInfo) Info {
	info := Info{Name: name, Kind: kindOther, Size: fi.Size()}
	mode := fi.Mode()
	attrs, _ := fi.Sys().(*syscall.Win32FileAttributeData)
	reparse := attrs != nil && attrs.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0
	switch {
	case mode&fs.ModeSymlink != 0, mode&fs.ModeIrregular != 0 && reparse:
		// Node (libuv) reports junctions and mount points as symbolic links; Go calls them irregular.
		info.Kind = kindSymlink
	case mode.IsDir():
		info.Kind = kindDirectory
	case mode.IsRegular():
		info.Kind = kindFile
	}
	if attrs != nil {
		info.MtimeSec, info.MtimeNsec = filetimeToUnix(filetimeValue(attrs.LastWriteTime))
		info.Ino = filetimeValue(attrs.CreationTime)
	} else {
		t := fi.ModTime()
		info.MtimeSec, info.MtimeNsec = t.Unix(), int64(t.Nanosecond())
	}
	return info
}

func filetimeValue(ft syscall.Filetime) uint64 {
	return uint64(ft.HighDateTime)<<32 | uint64(ft.LowDateTime)
}

func lstatInfo(path string) (Info, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return Info{}, err
	}
	return infoFromFileInfo(baseName(path, true), fi), nil
}

func isDirectory(path string) (bool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}

func fstatInfo(f *os.File, name string) (Info, error) {
	fi, err := f.Stat()
	if err != nil {
		return Info{}, err
	}
	return infoFromFileInfo(name, fi), nil
}

// openReader: Windows has no O_NOFOLLOW, so noFollow checks the link first (not race-free, like
// NodeExecutionEnv on Windows).
func openReader(path string, noFollow bool) (*os.File, error) {
	if noFollow {
		if info, err := lstatInfo(path); err == nil && info.Kind == kindSymlink {
			return nil, errSymlink
		}
	}
	return openRead(path)
}

// openRead opens any file for reading; directories open too (backup semantics) and fail when read.
func openRead(path string) (*os.File, error) {
	return openShared(path, windows.GENERIC_READ, windows.OPEN_EXISTING)
}

// openWrite opens like libuv: CREATE_ALWAYS for "w", OPEN_ALWAYS with append access for "a". Creating over a
// directory fails ERROR_FILE_EXISTS, which libuv reports as EISDIR.
func openWrite(path string, appendTo bool) (*os.File, error) {
	access := uint32(windows.GENERIC_WRITE)
	disposition := uint32(windows.CREATE_ALWAYS)
	if appendTo {
		access = windows.FILE_APPEND_DATA | windows.SYNCHRONIZE
		disposition = windows.OPEN_ALWAYS
	}
	file, err := openShared(path, access, disposition)
	if errors.Is(err, windows.ERROR_FILE_EXISTS) {
		return nil, errno.Errno("EISDIR")
	}
	return file, err
}

// openUpdate opens "r+" like libuv: a directory opens too (backup semantics), so truncating one fails in
// ftruncate (EINVAL) as in Node, not in the open.
func openUpdate(path string) (*os.File, error) {
	return openShared(path, windows.GENERIC_READ|windows.GENERIC_WRITE, windows.OPEN_EXISTING)
}

// openShared is CreateFile as libuv's fs open calls it: sharing read, write and delete (so a file open here
// can still be renamed or deleted by others, as with Node; Go's os.Open does not share delete) and backup
// semantics (so directories open).
func openShared(path string, access, disposition uint32) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	h, err := windows.CreateFile(name, access, share, nil, disposition,
		windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// fsyncDirectoryFailure: on Windows a directory opens "r+", and Node's flushFile fails after fstat with
// "Is a directory" (WIN5).
func fsyncDirectoryFailure(path string) *proto.Failure {
	return &proto.Failure{Code: "EISDIR", Message: "Is a directory", Path: path, HasPath: true}
}

// openDirectory opens a directory for listing as libuv does, sharing read, write and delete (Go's os.Open does
// not share delete, so a directory being listed could not be renamed meanwhile); a file fails ENOTDIR (libuv
// turns ERROR_DIRECTORY into ENOTDIR here).
func openDirectory(path string) (*os.File, error) {
	dir, err := openShared(path, windows.GENERIC_READ, windows.OPEN_EXISTING)
	if err != nil {
		if errors.Is(err, windows.ERROR_DIRECTORY) {
			return nil, errno.Errno("ENOTDIR")
		}
		return nil, err
	}
	fi, err := dir.Stat()
	if err == nil && !fi.IsDir() {
		err = errno.Errno("ENOTDIR")
	}
	if err != nil {
		_ = dir.Close()
		return nil, err
	}
	return dir, nil
}

func endOfDirectory(error) bool { return false }

func makeDirectory(path string, _ uint32) error { return os.Mkdir(path, 0o777) }

// renamePath is MoveFileEx with MOVEFILE_REPLACE_EXISTING (Go's os.Rename on Windows).
func renamePath(from, to string) error { return os.Rename(from, to) }

func removeDirectory(path string) error { return syscall.Rmdir(path) }

// unlinkEntry removes a non-directory entry: a symbolic link or junction to a directory is removed as the
// directory entry it is, and a read-only file has its read-only bit cleared before one retry (os.Remove does
// both).
func unlinkEntry(path string, _ Info) error { return os.Remove(path) }

// realPath resolves every link through the final path of an open handle, with the \\?\ prefix removed.
func realPath(path string) (string, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return "", err
	}
	h, err := windows.CreateFile(name, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return "", err
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, 512)
	for {
		n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), 0)
		if err != nil {
			return "", err
		}
		if int(n) < len(buf) {
			return stripVerbatimPrefix(windows.UTF16ToString(buf[:n])), nil
		}
		buf = make([]uint16, n+1)
	}
}

func rawNameBytes(name string) []byte { return []byte(name) }
