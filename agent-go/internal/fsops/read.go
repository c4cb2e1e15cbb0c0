package fsops

import (
	"errors"
	"io"
	"os"

	"github.com/outpost-dev/outpost/agent-go/internal/bufpool"
	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/handles"
	"github.com/outpost-dev/outpost/agent-go/internal/linescan"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// openReply is the result of open: {handle, info} for a reader; {handle, stat} or {handle, statError} for
// mode "read".
type openReply struct {
	Handle    uint64         `json:"handle"`
	Info      *Info          `json:"info,omitempty"`
	Stat      *Info          `json:"stat,omitempty"`
	StatError map[string]any `json:"statError,omitempty"`
	// Fd is the agent's descriptor of a regular file, when the request asked for it (see sameHostFd).
	Fd *int `json:"fd,omitempty"`
}

// open: {path, noFollow?, mode?, fd?}.
//   - Reader (no mode; openBinaryReader): nonblocking open (+O_NOFOLLOW with noFollow: a final link fails
//     SYMLINK "Refusing to follow a symbolic link"), fstat, a directory fails EISDIR "EISDIR: illegal operation
//     on a directory, read", any other non-regular file NOT_REGULAR "Not a regular file" → {handle, info}.
//   - mode "read": Node's open(path, "r") of any kind of file, blocking (a FIFO waits for a writer; a
//     directory opens and fails at read) → {handle, stat} or {handle, statError} when fstat fails; with fd
//     (the same-host shortcut), also the descriptor of a regular file as "fd".
func (o *Ops) open(call *proto.Call) (proto.Reply, error) {
	var args struct {
		Path     *string `json:"path"`
		NoFollow *bool   `json:"noFollow"`
		Mode     *string `json:"mode"`
		Fd       *bool   `json:"fd"`
	}
	path, f := decodePath(call, &args, &args.Path, "path")
	if f != nil {
		return fail(f)
	}
	if o.table.Full() {
		return fail(handles.ErrTooMany())
	}
	switch {
	case args.Mode == nil:
		return o.openReader(path, flag(args.NoFollow, false))
	case *args.Mode == "read":
		return o.openRead(path, flag(args.Fd, false))
	}
	return fail(proto.Invalid("unknown open mode " + *args.Mode))
}

func (o *Ops) openReader(path string, noFollow bool) (proto.Reply, error) {
	file, err := openReader(path, noFollow)
	if errors.Is(err, errSymlink) {
		return fail(&proto.Failure{Code: "SYMLINK", Message: "Refusing to follow a symbolic link", Path: path, HasPath: true})
	}
	if err != nil {
		return fail(errno.Fail(err, "open", path))
	}
	info, err := fstatInfo(file, baseName(path, onWindows))
	if err != nil {
		_ = file.Close()
		return fail(errno.FailHandle(err, "fstat"))
	}
	switch info.Kind {
	case kindFile:
	case kindDirectory:
		_ = file.Close()
		return fail(&proto.Failure{
			Code: "EISDIR", Message: "EISDIR: illegal operation on a directory, read", Syscall: "read",
			Path: path, HasPath: true,
		})
	default:
		_ = file.Close()
		return fail(&proto.Failure{Code: "NOT_REGULAR", Message: "Not a regular file", Path: path, HasPath: true})
	}
	id, f := o.keepFile(file, path)
	if f != nil {
		return fail(f)
	}
	return ok(openReply{Handle: id, Info: &info})
}

func (o *Ops) openRead(path string, withFd bool) (proto.Reply, error) {
	file, err := openRead(path)
	if err != nil {
		return fail(errno.Fail(err, "open", path))
	}
	info, statErr := fstatInfo(file, baseName(path, onWindows))
	return o.keepOpened(file, path, info, statErr, withFd)
}

type handleArgs struct {
	Handle *float64 `json:"handle"`
}

// file resolves the handle of a request on an open file.
func (o *Ops) file(call *proto.Call, handle *float64) (*fileHandle, *proto.Failure) {
	id, f := requireHandle(call.Op, handle)
	if f != nil {
		return nil, f
	}
	return o.table.File(id)
}

// pread: {handle, offset?, length} → payload. The length is clamped to MaxPayload. With an offset, positional
// reads repeat until the length is read or EOF; without, ONE read() at the current position (files of
// unknown size: FIFOs, devices). Failures as Node reports them: EISDIR read for a directory, ESPIPE read for a
// positional read of a FIFO.
func (o *Ops) pread(call *proto.Call) (proto.Reply, error) {
	var args struct {
		Handle *float64 `json:"handle"`
		Offset *float64 `json:"offset"`
		Length *float64 `json:"length"`
	}
	if f := call.Decode(&args); f != nil {
		return fail(f)
	}
	if args.Length == nil || !integer(*args.Length, 0, maxSafeInteger) {
		return fail(proto.Invalid("pread needs a non-negative integer length"))
	}
	if args.Offset != nil && !integer(*args.Offset, 0, maxSafeInteger) {
		return fail(proto.Invalid("pread needs a non-negative integer offset"))
	}
	handle, f := o.file(call, args.Handle)
	if f != nil {
		return fail(f)
	}
	want := min(int(*args.Length), MaxPayload)
	buf := readBuffer(handle.file, want, args.Offset)
	read := func(p []byte, done int) (int, error) {
		if args.Offset != nil {
			return handle.file.ReadAt(p, int64(*args.Offset)+int64(done))
		}
		return handle.file.Read(p)
	}
	var n int
	var err error
	if len(buf) > 0 {
		n, err = read(buf, 0)
	}
	// A regular file that grew past the buffer since its size was taken: read on, as one buffer of the
	// requested length would have.
	for err == nil && n == len(buf) && len(buf) < want {
		grown := make([]byte, min(want, 2*len(buf)))
		copy(grown, buf[:n])
		buf = grown
		var m int
		m, err = read(buf[n:], n)
		n += m
		if m == 0 {
			break
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		bufpool.Put(buf)
		return fail(errno.FailHandle(err, "read"))
	}
	// The buffer serves a later read once the reply is written (a grown buffer is not a pool's and is dropped).
	return proto.Reply{JSON: empty, Payload: buf[:n], Written: func() { bufpool.Put(buf) }}, nil
}

// readSlack is the room a large read of a regular file leaves beyond the file's size, for a file that grows.
const readSlack = 64 << 10

// readBuffer sizes pread's buffer by what the read can return: want bytes, except that a regular file yields
// at most its size past the position (plus readSlack for growth). A read of 2^53-1 bytes from a 6-byte file
// thus allocates 64 KiB, not the 16 MiB payload limit, and its reply holds no more.
func readBuffer(file *os.File, want int, offset *float64) []byte {
	if want <= readSlack {
		return readMemory(want)
	}
	info, err := file.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return readMemory(want)
	}
	var pos int64
	if offset != nil {
		pos = int64(*offset)
	} else if pos, err = file.Seek(0, io.SeekCurrent); err != nil {
		return readMemory(want)
	}
	return readMemory(int(min(int64(want), max(info.Size()-pos, 0)+readSlack)))
}

// readMemory returns a buffer of n bytes: a recycled one for the usual whole-class lengths (the 64 KiB and
// 512 KiB reads of readFile), fresh memory of exactly n bytes otherwise (a short file's buffer stays small).
func readMemory(n int) []byte {
	if n%bufpool.Class == 0 {
		return bufpool.Get(n)
	}
	return make([]byte, n)
}

// fstat: {handle} → info of the open file, named after the path it was opened with.
func (o *Ops) fstat(call *proto.Call) (proto.Reply, error) {
	var args handleArgs
	if f := call.Decode(&args); f != nil {
		return fail(f)
	}
	handle, f := o.file(call, args.Handle)
	if f != nil {
		return fail(f)
	}
	info, err := fstatInfo(handle.file, baseName(handle.path, onWindows))
	if err != nil {
		return fail(errno.FailHandle(err, "fstat"))
	}
	return ok(info)
}

// scanLines: {handle, startLine, endLine?} → LineScan. The file is read from byte 0 in 64 KiB positional
// reads until a read returns nothing; a cancel is honoured between reads (code "aborted").
func (o *Ops) scanLines(call *proto.Call) (proto.Reply, error) {
	var args struct {
		Handle    *float64 `json:"handle"`
		StartLine *float64 `json:"startLine"`
		EndLine   *float64 `json:"endLine"`
	}
	if f := call.Decode(&args); f != nil {
		return fail(f)
	}
	handle, f := o.file(call, args.Handle)
	if f != nil {
		return fail(f)
	}
	if args.StartLine == nil {
		return fail(proto.Invalid("Invalid line range"))
	}
	scanner, err := linescan.New(*args.StartLine, args.EndLine)
	if err != nil {
		return fail(proto.Invalid("Invalid line range"))
	}
	buf := make([]byte, scanChunk)
	for offset := int64(0); ; {
		n, err := handle.file.ReadAt(buf, offset)
		if err != nil && !errors.Is(err, io.EOF) {
			return fail(errno.FailHandle(err, "read"))
		}
		if o.afterScanRead != nil {
			o.afterScanRead(n)
		}
		if call.Aborted() {
			return fail(proto.Aborted("aborted"))
		}
		if n == 0 {
			break
		}
		scanner.Push(buf[:n])
		offset += int64(n)
	}
	return ok(scanner.Finish())
}

// close: {handle} → {}. Closes a file or directory; an unknown handle is fine.
func (o *Ops) close(call *proto.Call) (proto.Reply, error) {
	var args handleArgs
	if f := call.Decode(&args); f != nil {
		return fail(f)
	}
	id, f := requireHandle(call.Op, args.Handle)
	if f != nil {
		return fail(f)
	}
	kind, file, dir, found := o.table.Remove(id)
	switch {
	case !found:
	case kind == handles.Dir:
		dir.close()
	default:
		if err := file.file.Close(); err != nil {
			return fail(errno.FailHandle(err, "close"))
		}
	}
	return ok(empty)
}
