//go:build unix

package watch

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// retry repeats a system call interrupted by a signal, as libuv does.
func retry(call func() error) error {
	for {
		if err := call(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// statEntry is stat(2) (follow) or lstat(2) of path as a snapshot entry.
func statEntry(path string, follow bool) (entry, error) {
	var st unix.Stat_t
	err := retry(func() error {
		if follow {
			return unix.Stat(path, &st)
		}
		return unix.Lstat(path, &st)
	})
	if err != nil {
		return entry{}, err
	}
	kind := kindOther
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		kind = kindFile
	case unix.S_IFDIR:
		kind = kindDirectory
	case unix.S_IFLNK:
		kind = kindSymlink
	}
	return entry{
		kind:    kind,
		dev:     uint64(st.Dev),
		ino:     uint64(st.Ino),
		size:    int64(st.Size),
		mtimeMs: float64(st.Mtim.Sec)*1000 + float64(st.Mtim.Nsec)/1e6,
	}, nil
}

// isPermissionError tells EACCES and EPERM apart from other failures (Node's permission codes).
func isPermissionError(err error) bool {
	return errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}

// isSkippableDirError is what a directory listing below a target may fail with and still be skipped.
func isSkippableDirError(err error) bool {
	return isPermissionError(err) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)
}

// isIgnorableWatchError is what installing one native watcher may fail with and leave the path unwatched
// (Node's ENOENT, EACCES, EPERM); anything else means native watching is exhausted.
func isIgnorableWatchError(err error) bool {
	return isPermissionError(err) || errors.Is(err, unix.ENOENT)
}

// errNoWatches is the failure the test hook injects: the kernel's "out of inotify watches".
var errNoWatches error = unix.ENOSPC

// openDir opens a directory to list it. What the scan saw as a directory a moment before may be a FIFO now, and
// a plain open of a FIFO waits for a writer forever; O_DIRECTORY fails ENOTDIR at once instead.
func openDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK, 0)
}

// openRegular opens a file to hash it, failing unless it is (still) a regular file: O_NONBLOCK keeps the open of
// a FIFO that replaced it from waiting for a writer.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, unix.EINVAL
	}
	return f, nil
}
