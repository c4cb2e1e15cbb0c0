package fsops

import (
	"crypto/rand"
	"errors"
	"os"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// errSymlink is what openReader returns when noFollow refuses a final symbolic link.
var errSymlink = errors.New("refusing to follow a symbolic link")

type pathArgs struct {
	Path *string `json:"path"`
}

// lstat: {path} → info. lstat(2), errors with syscall lstat.
func (o *Ops) lstat(call *proto.Call) (proto.Reply, error) {
	var args pathArgs
	path, f := decodePath(call, &args, &args.Path, "path")
	if f != nil {
		return fail(f)
	}
	info, err := lstatInfo(path)
	if err != nil {
		return fail(errno.Fail(err, "lstat", path))
	}
	return ok(info)
}

// realpath: {path} → {path}. realpath(3), errors with syscall realpath.
func (o *Ops) realpath(call *proto.Call) (proto.Reply, error) {
	var args pathArgs
	path, f := decodePath(call, &args, &args.Path, "path")
	if f != nil {
		return fail(f)
	}
	resolved, err := realPath(path)
	if err != nil {
		return fail(errno.Fail(err, "realpath", path))
	}
	return ok(struct {
		Path string `json:"path"`
	}{resolved})
}

// rename: {path, to} → {}. rename(2) (Windows: replacing an existing file); the error names both paths.
func (o *Ops) rename(call *proto.Call) (proto.Reply, error) {
	var args struct {
		Path *string `json:"path"`
		To   *string `json:"to"`
	}
	from, f := decodePath(call, &args, &args.Path, "oldPath")
	if f != nil {
		return fail(f)
	}
	to, f := requirePath(call.Op, "newPath", args.To)
	if f != nil {
		return fail(f)
	}
	if err := renamePath(from, to); err != nil {
		return fail(errno.FailRename(err, from, to))
	}
	return ok(empty)
}

// truncate: {path, size} → {}. Node's open(path, "r+") then ftruncate; the file is always closed.
func (o *Ops) truncate(call *proto.Call) (proto.Reply, error) {
	var args struct {
		Path *string  `json:"path"`
		Size *float64 `json:"size"`
	}
	path, f := decodePath(call, &args, &args.Path, "path")
	if f != nil {
		return fail(f)
	}
	if args.Size == nil || !integer(*args.Size, 0, maxSafeInteger) {
		return fail(proto.Invalid("truncate needs a non-negative integer size"))
	}
	size := int64(*args.Size)
	return done(updateFile(path, "ftruncate", func(file *os.File) error { return file.Truncate(size) }))
}

// fsync: {path} → {}. A directory fails EISDIR first (as opening it "r+" does on POSIX; on Windows with Node's
// message after its fstat, see fsyncDirectoryFailure); then open "r+" and a full fsync.
func (o *Ops) fsync(call *proto.Call) (proto.Reply, error) {
	var args pathArgs
	path, f := decodePath(call, &args, &args.Path, "path")
	if f != nil {
		return fail(f)
	}
	if dir, err := isDirectory(path); err == nil && dir {
		return fail(fsyncDirectoryFailure(path))
	}
	return done(updateFile(path, "fsync", (*os.File).Sync))
}

// updateFile opens path "r+" as Node's truncate and fsync do, applies change (its failure is reported with
// syscall, without a path, as Node reports a call on an open file) and always closes the file.
func updateFile(path, syscall string, change func(*os.File) error) *proto.Failure {
	file, err := openUpdate(path)
	if err != nil {
		return errno.Fail(err, "open", path)
	}
	defer file.Close()
	if err := change(file); err != nil {
		return errno.FailHandle(err, syscall)
	}
	return nil
}

// mkdir: {path, recursive} → {}. Recursive follows Node's rules (see makeParents); otherwise plain mkdir(2).
func (o *Ops) mkdir(call *proto.Call) (proto.Reply, error) {
	var args struct {
		Path      *string `json:"path"`
		Recursive *bool   `json:"recursive"`
	}
	path, f := decodePath(call, &args, &args.Path, "path")
	if f != nil {
		return fail(f)
	}
	if flag(args.Recursive, false) {
		return done(mkdirRecursive(path))
	}
	if err := makeDirectory(path, 0o777); err != nil {
		return fail(errno.Fail(err, "mkdir", path))
	}
	return ok(empty)
}

// mkdtempAttempts bounds the retries when a random name already exists (as mkdtemp(3) does, more loosely).
const mkdtempAttempts = 1000

// mkdtemp: {path: prefix} → {path}. Creates prefix + 6 random [A-Za-z0-9] with mode 0700; a failure names
// the attempted path with its suffix filled in, as Node's does.
func (o *Ops) mkdtemp(call *proto.Call) (proto.Reply, error) {
	var args struct {
		Path *string `json:"path"`
		// File (feature mkdtemp.file): an empty file to create in the new directory.
		File *string `json:"file"`
	}
	prefix, f := decodePath(call, &args, &args.Path, "prefix")
	if f != nil {
		return fail(f)
	}
	var err error
	var candidate string
	for range mkdtempAttempts {
		candidate = prefix + randomSuffix()
		if err = makeDirectory(candidate, 0o700); err == nil {
			return madeTemp(candidate, args.File)
		}
		if !errno.Is(err, "EEXIST") {
			break
		}
	}
	return fail(errno.Fail(err, "mkdtemp", candidate))
}

// madeTemp answers mkdtemp once the directory exists: {path}, or with a file name {path, file} once that file
// was created too. A failure to create the file leaves the directory, as Node's createTempFile does.
func madeTemp(dir string, name *string) (proto.Reply, error) {
	type reply struct {
		Path string `json:"path"`
		File string `json:"file,omitempty"`
	}
	if name == nil {
		return ok(reply{Path: dir})
	}
	file, f := tempFile(dir, *name)
	if f != nil {
		return fail(f)
	}
	return ok(reply{Path: dir, File: file})
}

const suffixAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomSuffix returns 6 characters from [A-Za-z0-9], uniformly (bytes >= 248 are drawn again).
func randomSuffix() string {
	out := make([]byte, 0, 6)
	var buf [16]byte
	for len(out) < 6 {
		_, _ = rand.Read(buf[:])
		for _, b := range buf {
			if b < 248 && len(out) < 6 {
				out = append(out, suffixAlphabet[int(b)%len(suffixAlphabet)])
			}
		}
	}
	return string(out)
}
