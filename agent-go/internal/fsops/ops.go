// Package fsops serves the agent's file operations (pi-env protocol 1): lstat, realpath, write, writeChunk,
// truncate, fsync, rename, mkdir, rm, mkdtemp, open, pread, fstat, scanLines, opendir, readdir and close, plus
// Outpost's readFile and listDir (open, read and close of a small file or a directory in one request) and
// mkdtemp's file (the whole of createTempFile in one request).
//
// Each operation performs the system calls Node would make for the same NodeExecutionEnv method and reports
// failures exactly as Node does: libuv code, syscall and path (see package errno). Path resolution, abort
// checkpoints and the mapping to FileError codes are the client's job.
package fsops

import (
	"os"
	"sync"

	"github.com/outpost-dev/outpost/agent-go/internal/handles"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// MaxPayload is the largest reply payload (pi-env's MAX_PAYLOAD = 16 MiB − 64 KiB); pread lengths are
// clamped to it.
const MaxPayload = 16<<20 - 64<<10

// scanChunk is the size of the positional reads of scanLines (Durable's 64 KiB).
const scanChunk = 64 << 10

// Ops holds the handle table shared by the file operations of one connection.
type Ops struct {
	table *handles.Table[*fileHandle, *dirHandle]
	// afterScanRead, when set, is called after every read of scanLines with the bytes read; tests use it to
	// cancel a scan in the middle. It is nil in the agent.
	afterScanRead func(n int)
}

// New returns the file operations with an empty handle table.
func New() *Ops {
	return &Ops{table: handles.New[*fileHandle, *dirHandle](handles.Limit)}
}

// Handlers returns every file operation by op name. writeChunk is served by WriteChunk instead, because its
// chunks must run strictly in arrival order.
func (o *Ops) Handlers() map[string]proto.Handler {
	return map[string]proto.Handler{
		"lstat":     o.lstat,
		"realpath":  o.realpath,
		"write":     o.write,
		"truncate":  o.truncate,
		"fsync":     o.fsync,
		"rename":    o.rename,
		"mkdir":     o.mkdir,
		"rm":        o.rm,
		"mkdtemp":   o.mkdtemp,
		"open":      o.open,
		"readFile":  o.readFile,
		"pread":     o.pread,
		"fstat":     o.fstat,
		"scanLines": o.scanLines,
		"opendir":   o.opendir,
		"readdir":   o.readdir,
		"listDir":   o.listDir,
		"close":     o.close,
	}
}

// CloseAll closes every open handle (at the end of the connection). Chunk writes still queued fail with EBADF.
func (o *Ops) CloseAll() {
	files, dirs := o.table.Drain()
	for _, f := range files {
		_ = f.file.Close()
	}
	for _, d := range dirs {
		d.close()
	}
}

// empty is the `{}` result of operations that return nothing.
var empty = struct{}{}

func ok(v any) (proto.Reply, error) { return proto.Reply{JSON: v}, nil }

func fail(f *proto.Failure) (proto.Reply, error) { return proto.Reply{}, f }

// done answers `{}`, or f when it is not nil (never a non-nil error holding a nil *Failure).
func done(f *proto.Failure) (proto.Reply, error) {
	if f != nil {
		return fail(f)
	}
	return ok(empty)
}

// keepFile registers an open file as a handle. When the table refuses it (EMFILE) the file is closed, since
// nothing else ever would.
func (o *Ops) keepFile(file *os.File, path string) (uint64, *proto.Failure) {
	id, f := o.table.AddFile(&fileHandle{file: file, path: path})
	if f != nil {
		_ = file.Close()
	}
	return id, f
}

// fileHandle is an open file: a reader, a blocking `open(path, "r")`, or a writer kept by `write`.
type fileHandle struct {
	file *os.File
	path string // as given at open; names the file in its info

	mu       sync.Mutex // guards the chunk queue
	queue    []chunkJob
	draining bool
	poisoned bool // a chunk write failed; later chunks are refused so a file never has gaps
}

// dirStream is an open directory's names: an *os.File on POSIX, Windows' own enumeration on Windows.
type dirStream interface {
	Readdirnames(n int) ([]string, error)
	Close() error
}

// dirHandle is an open directory. Its own lock serialises reads of it; the table lock is never held meanwhile.
type dirHandle struct {
	mu   sync.Mutex
	dir  dirStream
	path string
	// pending holds names read from the stream that no page has taken yet (a page ends at its budget in the
	// middle of a batch); streamEnd and streamErr are how the stream ended, which counts once they are sent.
	pending   []string
	streamEnd bool
	streamErr *proto.Failure
	closed    bool
}

func (d *dirHandle) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.closed = true
		_ = d.dir.Close()
	}
}
