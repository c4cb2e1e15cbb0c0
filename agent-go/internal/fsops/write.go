package fsops

import (
	"os"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/handles"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// write: {path, append, parents?, keep?, fd?} + payload → {} or {handle} (with fd, also "fd": the descriptor of a
// regular file, for the same-host shortcut). With parents (the default) the parent
// directory is made first with Node's recursive-mkdir rules (failures: syscall mkdir and the path Node names);
// then the file is opened "w" or "a" (mode 0666) and the whole payload written. With keep the open file
// becomes a handle for writeChunk. A cancel is seen after the parent is made and, without append, after the open.
func (o *Ops) write(call *proto.Call) (proto.Reply, error) {
	var args struct {
		Path    *string `json:"path"`
		Append  *bool   `json:"append"`
		Parents *bool   `json:"parents"`
		Keep    *bool   `json:"keep"`
		Fd      *bool   `json:"fd"`
	}
	path, f := decodePath(call, &args, &args.Path, "path")
	if f != nil {
		return fail(f)
	}
	keep := flag(args.Keep, false)
	appendTo := flag(args.Append, false)
	if flag(args.Parents, true) {
		if f := mkdirRecursive(dirName(path, onWindows)); f != nil {
			return fail(f)
		}
		// The env's checkpoint after creating the parent (spec/semantics.md A3): nothing is opened.
		if call.Aborted() {
			return fail(proto.Aborted("aborted"))
		}
	}
	// A handle that cannot be kept must be refused before the file is created or truncated.
	if keep && o.table.Full() {
		return fail(handles.ErrTooMany())
	}
	file, err := openWrite(path, appendTo)
	if err != nil {
		return fail(errno.Fail(err, "open", path))
	}
	// Node's writeFile checks its signal once the file is open, before the first write (the file stays created
	// or truncated); appendFile runs without a signal. An open can wait (a FIFO without a reader).
	if !appendTo && call.Aborted() {
		_ = file.Close()
		return fail(proto.Aborted("The operation was aborted"))
	}
	if err := writeAll(file, call.Payload); err != nil {
		_ = file.Close()
		return fail(errno.FailHandle(err, "write"))
	}
	if !keep {
		if err := file.Close(); err != nil {
			return fail(errno.FailHandle(err, "close"))
		}
		return ok(empty)
	}
	reply := handleReply{}
	if flag(args.Fd, false) {
		if fd, regular := sameHostFd(file); regular {
			reply.Fd = &fd
		}
	}
	id, f := o.keepFile(file, path)
	if f != nil {
		return fail(f)
	}
	reply.Handle = id
	return ok(reply)
}

type handleReply struct {
	Handle uint64 `json:"handle"`
	// Fd is the agent's descriptor of a regular file, when the request asked for it (see sameHostFd).
	Fd *int `json:"fd,omitempty"`
}

// writeAll writes every byte (os.File continues after short writes and retries EINTR).
func writeAll(file *os.File, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	_, err := file.Write(data)
	return err
}

// chunkJob is one queued writeChunk.
type chunkJob struct {
	payload []byte
	// control is the request's; a chunk cancelled before its turn is dropped, not written.
	control *proto.Control
	done    func(proto.Reply, error)
}

// WriteChunk serves writeChunk {handle} + payload → {}: it appends the payload to a kept file. It is called by
// the server's reader in arrival order and never blocks: the write runs in the background, chunks of one
// handle strictly one after another in the order they arrived. Once a chunk fails, every later chunk of that
// handle fails EBADF "an earlier write failed", so a file never has gaps. A chunk whose request was cancelled
// before its turn came is not written: it fails "aborted" and counts as a failure (writeFile's abort stops the
// file at the chunk being written when the cancel arrived, as Node stops at the piece it is writing). A malformed request or an unknown
// handle is answered before WriteChunk returns.
func (o *Ops) WriteChunk(call *proto.Call, done func(proto.Reply, error)) {
	var args struct {
		Handle *float64 `json:"handle"`
	}
	if f := call.Decode(&args); f != nil {
		done(proto.Reply{}, f)
		return
	}
	id, f := requireHandle(call.Op, args.Handle)
	if f != nil {
		done(proto.Reply{}, f)
		return
	}
	handle, f := o.table.File(id)
	if f != nil {
		done(proto.Reply{}, f)
		return
	}
	handle.enqueue(chunkJob{payload: call.Payload, control: call.Control, done: done})
}

func (h *fileHandle) enqueue(job chunkJob) {
	h.mu.Lock()
	h.queue = append(h.queue, job)
	start := !h.draining
	h.draining = true
	h.mu.Unlock()
	if start {
		go h.drain()
	}
}

// drain runs queued chunks until the queue is empty; one drain runs per handle at a time.
func (h *fileHandle) drain() {
	for {
		h.mu.Lock()
		if len(h.queue) == 0 {
			h.draining = false
			h.queue = nil
			h.mu.Unlock()
			return
		}
		job := h.queue[0]
		h.queue[0] = chunkJob{}
		h.queue = h.queue[1:]
		poisoned := h.poisoned
		h.mu.Unlock()

		if poisoned {
			job.done(proto.Reply{}, &proto.Failure{Code: "EBADF", Message: "EBADF: an earlier write failed"})
			continue
		}
		if job.control != nil && job.control.Aborted() {
			h.mu.Lock()
			h.poisoned = true
			h.mu.Unlock()
			job.done(proto.Reply{}, proto.Aborted("aborted"))
			continue
		}
		if err := writeAll(h.file, job.payload); err != nil {
			h.mu.Lock()
			h.poisoned = true
			h.mu.Unlock()
			job.done(proto.Reply{}, errno.FailHandle(err, "write"))
			continue
		}
		job.done(proto.Reply{JSON: empty}, nil)
	}
}
