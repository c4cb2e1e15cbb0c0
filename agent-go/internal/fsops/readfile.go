package fsops

import (
	"errors"
	"io"
	"os"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/handles"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// readFileReply is the result of readFile when the file was read whole: its stat, the bytes in the payload.
type readFileReply struct {
	Stat *Info `json:"stat"`
}

// readFile: {path, max} — Outpost's one-request form of the start of Node's readFile (announced as the
// "readFile" feature). It opens like open {mode:"read"} and fstats; when the open file is a regular file of
// 1..max bytes (max capped at MaxPayload), it reads those bytes from offset 0 (positional reads until that many or
// end of file, as pread does), closes the file and answers {stat} with the bytes as payload; a regular file of size
// 0 whose first read finds nothing is closed and answered {stat} with no payload. Anything else (a larger file, an
// empty-looking file with bytes, a directory, a FIFO, a failed fstat) is answered exactly as open {mode:"read"} would
// answer — {handle, stat} or {handle, statError} — and the client goes on with pread and close. A failed read
// closes the file and fails as pread does (syscall read, no path).
func (o *Ops) readFile(call *proto.Call) (proto.Reply, error) {
	var args struct {
		Path *string  `json:"path"`
		Max  *float64 `json:"max"`
		Fd   *bool    `json:"fd"`
	}
	path, f := decodePath(call, &args, &args.Path, "path")
	if f != nil {
		return fail(f)
	}
	if args.Max == nil || !integer(*args.Max, 0, maxSafeInteger) {
		return fail(proto.Invalid("readFile needs a non-negative integer max"))
	}
	// The same refusal as open's, so the answer never depends on whether the file fits.
	if o.table.Full() {
		return fail(handles.ErrTooMany())
	}
	file, err := openRead(path)
	if err != nil {
		return fail(errno.Fail(err, "open", path))
	}
	info, statErr := fstatInfo(file, baseName(path, onWindows))
	limit := min(int64(*args.Max), MaxPayload)
	if statErr == nil && info.Kind == kindFile && info.Size == 0 && emptyAtStart(file) {
		_ = file.Close()
		return proto.Reply{JSON: readFileReply{Stat: &info}}, nil
	}
	if statErr != nil || info.Kind != kindFile || info.Size <= 0 || info.Size > limit {
		return o.keepOpened(file, path, info, statErr, flag(args.Fd, false))
	}
	buf := make([]byte, info.Size)
	n, err := file.ReadAt(buf, 0)
	_ = file.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return fail(errno.FailHandle(err, "read"))
	}
	return proto.Reply{JSON: readFileReply{Stat: &info}, Payload: buf[:n]}, nil
}

// emptyAtStart reports whether a regular file that stats as empty really has no bytes: Node reads such a file
// until a read returns nothing, and for most of them the first read does. A positional read leaves the position
// alone, so a file that does have bytes (a kernel file that stats as 0) is kept open untouched and read by the
// client as before; so is one whose read fails, which then fails the client's own read.
func emptyAtStart(file *os.File) bool {
	var probe [1]byte
	n, err := file.ReadAt(probe[:], 0)
	return n == 0 && errors.Is(err, io.EOF)
}

// keepOpened answers like open {mode:"read"}: the file becomes a handle, with its stat or the fstat's failure.
func (o *Ops) keepOpened(file *os.File, path string, info Info, statErr error, withFd bool) (proto.Reply, error) {
	fd, regular := 0, false
	if withFd {
		fd, regular = sameHostFd(file)
	}
	id, f := o.keepFile(file, path)
	if f != nil {
		return fail(f)
	}
	reply := openReply{Handle: id}
	if statErr != nil {
		reply.StatError = errno.FailHandle(statErr, "fstat").JSON()
	} else {
		reply.Stat = &info
	}
	if regular {
		reply.Fd = &fd
	}
	return ok(reply)
}
