package fsops

import (
	"strings"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/handles"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// Features are the hello features of behaviours the file operations add to protocol 1 operations (new operations
// such as readFile and listDir are announced by name automatically).
var Features = []string{MkdtempFileFeature}

// MkdtempFileFeature: mkdtemp accepts `file`, the name of an empty file to create in the new directory (the
// second half of createTempFile), so the whole of createTempFile is one request.
const MkdtempFileFeature = "mkdtemp.file"

// listDirReply is listDir's result: the first page of entries; a handle when the directory has more.
type listDirReply struct {
	Handle  uint64     `json:"handle,omitempty"`
	Entries []dirEntry `json:"entries"`
	Done    bool       `json:"done"`
}

// listDir: {path, max} — Outpost's one-request form of opendir, readdir and close (announced as the "listDir"
// feature). It opens the directory as opendir does (and fails as opendir does) and reads a first page as readdir
// {max} does. When that page holds every entry the directory is closed and the answer is {entries, done: true};
// otherwise it stays open and the answer is {handle, entries, done: false}, the client going on with readdir and
// close as in protocol 1. A failed read closes the directory and fails as readdir does.
func (o *Ops) listDir(call *proto.Call) (proto.Reply, error) {
	var args struct {
		Path *string  `json:"path"`
		Max  *float64 `json:"max"`
	}
	path, f := decodePath(call, &args, &args.Path, "path")
	if f != nil {
		return fail(f)
	}
	if args.Max == nil || !integer(*args.Max, 1, maxSafeInteger) {
		return fail(proto.Invalid("listDir needs max >= 1"))
	}
	// The same refusal as opendir's, so the answer never depends on the directory's size.
	if o.table.Full() {
		return fail(handles.ErrTooMany())
	}
	dir, err := openDirStream(path)
	if err != nil {
		return fail(errno.Fail(err, "opendir", path))
	}
	d := &dirHandle{dir: dir, path: path}
	entries, failure := d.read(int(min(*args.Max, 1<<30)))
	if failure != nil || d.isDone() {
		d.close()
		if failure != nil {
			return fail(failure)
		}
		return ok(listDirReply{Entries: entries, Done: true})
	}
	id, f := o.table.AddDir(d)
	if f != nil {
		d.close() // the table refused it: nothing else would ever close it
		return fail(f)
	}
	return ok(listDirReply{Handle: id, Entries: entries, Done: false})
}

// tempFile creates the empty file `name` in the directory dir made by mkdtemp, as Node's writeFile(path, "")
// does (open for writing, created or truncated, closed), and returns its path. name must be one plain path
// component, so that the path is exactly the client's join of the two.
func tempFile(dir, name string) (string, *proto.Failure) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, 0) || strings.Contains(name, "/") ||
		(onWindows && strings.Contains(name, `\`)) {
		return "", proto.Invalid("mkdtemp's file must be one path component")
	}
	path := dir + separator() + name
	file, err := openWrite(path, false)
	if err != nil {
		return "", errno.Fail(err, "open", path)
	}
	if err := file.Close(); err != nil {
		return "", errno.FailHandle(err, "close")
	}
	return path, nil
}

func separator() string {
	if onWindows {
		return `\`
	}
	return "/"
}
