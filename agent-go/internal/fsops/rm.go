package fsops

import (
	"errors"
	"io"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// rm: {path, recursive, force} → {}. Node's fs.promises.rm: lstat first (ENOENT with force is success, any
// other failure is reported with syscall lstat, even with force); a directory without recursive fails
// ERR_FS_EISDIR; then Node's rimraf removes the path without following links.
func (o *Ops) rm(call *proto.Call) (proto.Reply, error) {
	var args struct {
		Path      *string `json:"path"`
		Recursive *bool   `json:"recursive"`
		Force     *bool   `json:"force"`
	}
	path, f := decodePath(call, &args, &args.Path, "path")
	if f != nil {
		return fail(f)
	}
	info, err := lstatInfo(path)
	if err != nil {
		if flag(args.Force, false) && errno.Is(err, "ENOENT") {
			return ok(empty)
		}
		return fail(errno.Fail(err, "lstat", path))
	}
	if info.Kind == kindDirectory && !flag(args.Recursive, false) {
		return fail(&proto.Failure{
			Code:    "ERR_FS_EISDIR",
			Message: "Path is a directory: rm returned EISDIR (is a directory) " + path,
			Syscall: "rm",
			Path:    path,
			HasPath: true,
			Extra:   map[string]any{"errno": 21},
		})
	}
	return done(removeTree(path))
}

// removeTree is Node 20's rimraf: lstat (gone already is fine); a directory is removed with removeDir; other
// entries are unlinked, and an unlink refused with EPERM or EISDIR falls back to removeDir. Failures name
// the entry and the syscall that failed (lstat, unlink, rmdir, scandir).
func removeTree(path string) *proto.Failure {
	info, err := lstatInfo(path)
	if err != nil {
		if errno.Is(err, "ENOENT") {
			return nil
		}
		return errno.Fail(err, "lstat", path)
	}
	if info.Kind == kindDirectory {
		return removeDir(path, nil)
	}
	err = unlinkEntry(path, info)
	switch code := errno.Code(err); {
	case err == nil, code == "ENOENT":
		return nil
	case (code == "EPERM" && !onWindows) || code == "EISDIR":
		return removeDir(path, errno.Fail(err, "unlink", path))
	}
	return errno.Fail(err, "unlink", path)
}

// removeDir removes a directory: rmdir, and when it is not empty, every child (all are attempted; the first
// failure is reported), then rmdir again. ENOTDIR reports the failure that led here, if any.
func removeDir(path string, cause *proto.Failure) *proto.Failure {
	err := removeDirectory(path)
	switch code := errno.Code(err); code {
	case "":
		return nil
	case "ENOENT":
		return nil
	case "ENOTDIR":
		if cause != nil {
			return cause
		}
		return errno.Fail(err, "rmdir", path)
	case "ENOTEMPTY", "EEXIST", "EPERM":
	default:
		return errno.Fail(err, "rmdir", path)
	}
	names, err := listNames(path)
	if err != nil {
		return errno.Fail(err, "scandir", path)
	}
	var first *proto.Failure
	for _, name := range names {
		if failure := removeTree(joinEntry(path, name, onWindows)); failure != nil && first == nil {
			first = failure
		}
	}
	if first != nil {
		return first
	}
	if err := removeDirectory(path); err != nil {
		return errno.Fail(err, "rmdir", path)
	}
	return nil
}

// listNames returns every entry name of a directory, raw (not decoded), without . and ..
func listNames(path string) ([]string, error) {
	dir, err := openDirectory(path)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	var names []string
	for {
		batch, err := dir.Readdirnames(1024)
		names = append(names, batch...)
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return names, err
		}
	}
}
