package fsops

import (
	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// mkdirRecursive is Node's recursive mkdir of path (see makeParents), failing as Node does: syscall mkdir on
// the path Node names, which may be a parent.
func mkdirRecursive(path string) *proto.Failure {
	if failed, err := makeParents(path); err != nil {
		return errno.Fail(err, "mkdir", failed)
	}
	return nil
}

// makeParents is Node's recursive mkdir (fs.promises.mkdir with recursive: the asynchronous MKDirpAsync of
// node_file.cc), returning the path Node's error names when it fails:
//   - mkdir the path; ENOENT → make its parent first, then retry it;
//   - EACCES, EPERM, ENOTDIR → fail with that path;
//   - anything else (EEXIST above all) → stat the path: an existing directory is fine; an EEXIST on a
//     parent that is not a directory (a file, a dangling link) → ENOTDIR; on the target itself → EEXIST
//     for a non-directory, or stat's own error (ENOENT for a dangling link).
//
// Mode 0777 before umask. A directory made by someone else meanwhile is tolerated.
func makeParents(path string) (failed string, err error) {
	pending := []string{path}
	// Each ENOENT pushes a strictly shorter parent, so the loop ends; the bound only guards against a file
	// system that keeps answering ENOENT for a directory it just created.
	for steps := 0; len(pending) > 0 && steps < 1<<16; steps++ {
		next := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		err := makeDirectory(next, 0o777)
		code := errno.Code(err)
		if code == "ENOENT" {
			cut := lastSeparator(next, onWindows)
			if cut < 0 {
				code = "EEXIST" // a bare name whose parent cannot be missing: treat as existing
			} else {
				parent := next[:cut]
				if parent == "" || (onWindows && len(parent) == volumeLength(parent, true)) {
					parent = next[:cut+1] // the root itself, not an empty string
				}
				if parent == next {
					return next, err
				}
				pending = append(pending, next, parent)
				continue
			}
		}
		switch code {
		case "":
			continue
		case "EACCES", "EPERM", "ENOTDIR":
			return next, err
		}
		dir, statErr := isDirectory(next)
		if code == "EEXIST" && len(pending) > 0 {
			if statErr == nil && dir {
				continue
			}
			return next, errno.Errno("ENOTDIR")
		}
		switch {
		case statErr != nil:
			return next, statErr
		case !dir:
			return next, errno.Errno("EEXIST")
		}
		// The path exists as a directory (EEXIST, or another error racing a creation): Node stops here
		// successfully, even with parents still pending.
		return "", nil
	}
	if len(pending) > 0 {
		return path, errno.Errno("ENOENT")
	}
	return "", nil
}
