//go:build unix

package fsops

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

const onWindows = false

// retry repeats a system call interrupted by a signal, as libuv does.
func retry(call func() error) error {
	for {
		if err := call(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func infoFromStat(name string, st *unix.Stat_t) Info {
	kind := kindOther
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		kind = kindFile
	case unix.S_IFDIR:
		kind = kindDirectory
	case unix.S_IFLNK:
		kind = kindSymlink
	}
	return Info{
		Name:      name,
		Kind:      kind,
		Size:      int64(st.Size),
		MtimeSec:  int64(st.Mtim.Sec),
		MtimeNsec: int64(st.Mtim.Nsec),
		Dev:       uint64(st.Dev),
		Ino:       uint64(st.Ino),
	}
}

// lstatInfo is lstat(2) of path; the info is named after the path's last component.
func lstatInfo(path string) (Info, error) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Lstat(path, &st) }); err != nil {
		return Info{}, err
	}
	return infoFromStat(baseName(path, false), &st), nil
}

// isDirectory is stat(2) of path (following links): whether it is a directory.
func isDirectory(path string) (bool, error) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Stat(path, &st) }); err != nil {
		return false, err
	}
	return st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}

// fstatInfo is fstat(2) of an open file. The descriptor is used under the file's own reference, so a
// concurrent close cannot hand its number to another file meanwhile.
func fstatInfo(f *os.File, name string) (Info, error) {
	conn, err := f.SyscallConn()
	if err != nil {
		return Info{}, err
	}
	var st unix.Stat_t
	var statErr error
	if err := conn.Control(func(fd uintptr) {
		statErr = retry(func() error { return unix.Fstat(int(fd), &st) })
	}); err != nil {
		return Info{}, err
	}
	if statErr != nil {
		return Info{}, statErr
	}
	return infoFromStat(name, &st), nil
}

// openReader opens a file for a binary reader: nonblocking so a FIFO does not wait for a writer, and with
// noFollow refusing a final symbolic link (O_NOFOLLOW: ELOOP, or EMLINK on some BSDs).
func openReader(path string, noFollow bool) (*os.File, error) {
	flags := os.O_RDONLY | unix.O_NONBLOCK
	if noFollow {
		flags |= unix.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil && noFollow && (errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK)) {
		return nil, errSymlink
	}
	return f, err
}

// openRead is Node's open(path, "r"): blocking, any kind of file. A FIFO waits here for a writer.
func openRead(path string) (*os.File, error) { return os.OpenFile(path, os.O_RDONLY, 0) }

// openWrite is Node's open with flag "w" (truncate) or "a" (append), creating the file with mode 0666.
func openWrite(path string, appendTo bool) (*os.File, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	return os.OpenFile(path, flags, 0o666)
}

// openUpdate is Node's open(path, "r+"): an existing file, for reading and writing.
func openUpdate(path string) (*os.File, error) { return os.OpenFile(path, os.O_RDWR, 0) }

// openDirectory is opendir(3): O_DIRECTORY makes a file fail with ENOTDIR (and a FIFO fail without waiting).
func openDirectory(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_DIRECTORY, 0)
}

// openDirStream opens a directory for opendir/readdir (a file fails ENOTDIR).
func openDirStream(path string) (dirStream, error) { return openDirectory(path) }

// endOfDirectory reports whether a directory read error means the stream simply ended: glibc's readdir ends
// a directory that was removed (getdents reports ENOENT), and Node's dir.read() then returns null.
func endOfDirectory(err error) bool { return errors.Is(err, unix.ENOENT) }

func makeDirectory(path string, mode uint32) error {
	return retry(func() error { return unix.Mkdir(path, mode) })
}

// renamePath is rename(2) itself: os.Rename refuses to replace an empty directory, POSIX does not.
func renamePath(from, to string) error { return retry(func() error { return unix.Rename(from, to) }) }

func unlinkPath(path string) error { return retry(func() error { return unix.Unlink(path) }) }

func removeDirectory(path string) error { return retry(func() error { return unix.Rmdir(path) }) }

// maxSymlinks is glibc's limit on links followed by realpath before ELOOP.
const maxSymlinks = 40

// realPath is realpath(3) as glibc implements it: every component lstat'ed in turn, symbolic links expanded
// (at most 40), a non-directory followed by more path fails ENOTDIR. The errno is what realpath reports.
func realPath(path string) (string, error) {
	if path == "" {
		return "", unix.ENOENT
	}
	rest := path
	if !strings.HasPrefix(path, "/") {
		cwd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		rest = cwd + "/" + path
	}
	resolved := ""
	links := 0
	for {
		rest = strings.TrimLeft(rest, "/")
		if rest == "" {
			break
		}
		component := rest
		rest = ""
		if i := strings.IndexByte(component, '/'); i >= 0 {
			component, rest = component[:i], component[i:]
		}
		switch component {
		case ".":
			continue
		case "..":
			resolved = resolved[:max(strings.LastIndexByte(resolved, '/'), 0)]
			continue
		}
		next := resolved + "/" + component
		var st unix.Stat_t
		if err := retry(func() error { return unix.Lstat(next, &st) }); err != nil {
			return "", err
		}
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			links++
			if links > maxSymlinks {
				return "", unix.ELOOP
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", err
			}
			if strings.HasPrefix(target, "/") {
				resolved = ""
			}
			rest = target + rest
		case st.Mode&unix.S_IFMT != unix.S_IFDIR && rest != "":
			return "", unix.ENOTDIR
		default:
			resolved = next
		}
	}
	if resolved == "" {
		return "/", nil
	}
	return resolved, nil
}

// rawNameBytes is the name as the file system stores it, for `raw` when it is not UTF-8.
func rawNameBytes(name string) []byte { return []byte(name) }

// unlinkEntry removes a non-directory entry (a symbolic link itself, never its target).
func unlinkEntry(path string, _ Info) error { return unlinkPath(path) }

// fsyncDirectoryFailure: a directory cannot be opened "r+" on POSIX, so flushFile fails as that open does.
func fsyncDirectoryFailure(path string) *proto.Failure { return errno.New("EISDIR", "open", path) }
