package fsops

import (
	"errors"
	"io"
	"unicode/utf8"

	"golang.org/x/text/encoding/unicode"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// opendir: {path} → {handle}. opendir(3) (a file fails ENOTDIR), errors with syscall opendir.
func (o *Ops) opendir(call *proto.Call) (proto.Reply, error) {
	var args pathArgs
	path, f := decodePath(call, &args, &args.Path, "path")
	if f != nil {
		return fail(f)
	}
	dir, err := openDirStream(path)
	if err != nil {
		return fail(errno.Fail(err, "opendir", path))
	}
	id, f := o.table.AddDir(&dirHandle{dir: dir, path: path})
	if f != nil {
		_ = dir.Close() // the table refused it: nothing else would ever close it
		return fail(f)
	}
	return ok(handleReply{Handle: id})
}

// dirEntry is one readdir entry: {name, raw?, info} or {name, raw?, error}.
type dirEntry struct {
	Name  string         `json:"name"`
	Raw   []int          `json:"raw,omitempty"`
	Info  *Info          `json:"info,omitempty"`
	Error map[string]any `json:"error,omitempty"`
}

type readdirReply struct {
	Entries []dirEntry `json:"entries"`
	Done    bool       `json:"done"`
}

// pageBudget bounds the JSON of one readdir reply well below a frame's 16 MiB; a page cut short by it has
// done: false, and the client asks again.
const pageBudget = 8 << 20

// readdir: {handle, max} → {entries, done}. Up to max entries in directory order (. and .. skipped). Each
// name is decoded as UTF-8 with U+FFFD for invalid bytes (as Node's Buffer toString) and lstat'ed under the
// DECODED name, so a name that is not UTF-8 gets ENOENT as in Node; raw carries the original bytes when they
// differ. A directory removed after opendir simply ends (done: true), as Node's dir.read() does. Only this
// directory's lock is held meanwhile.
func (o *Ops) readdir(call *proto.Call) (proto.Reply, error) {
	var args struct {
		Handle *float64 `json:"handle"`
		Max    *float64 `json:"max"`
	}
	if f := call.Decode(&args); f != nil {
		return fail(f)
	}
	id, f := requireHandle(call.Op, args.Handle)
	if f != nil {
		return fail(f)
	}
	if args.Max == nil || !integer(*args.Max, 1, maxSafeInteger) {
		return fail(proto.Invalid("readdir needs max >= 1"))
	}
	d, f := o.table.Dir(id)
	if f != nil {
		return fail(f)
	}
	entries, failure := d.read(int(min(*args.Max, 1<<30)))
	if failure != nil {
		return fail(failure)
	}
	return ok(readdirReply{Entries: entries, Done: d.isDone()})
}

// isDone reports whether the directory has no more entries: the stream ended and every name it gave was sent.
func (d *dirHandle) isDone() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.streamEnd && len(d.pending) == 0
}

func (d *dirHandle) read(max int) ([]dirEntry, *proto.Failure) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, &proto.Failure{Code: "EBADF", Message: "unknown handle"}
	}
	entries := []dirEntry{}
	size := 0
	for len(entries) < max && size < pageBudget {
		if len(d.pending) == 0 {
			if d.streamErr != nil {
				return nil, d.streamErr
			}
			if d.streamEnd {
				break
			}
			d.fetch(max - len(entries))
			continue
		}
		entry := readEntry(d.path, d.pending[0])
		d.pending = d.pending[1:]
		size += entrySize(entry)
		entries = append(entries, entry)
	}
	return entries, nil
}

// fetch reads the next batch of names (at most want, at most 1024) into pending, and notes the stream's end or
// failure, which come after those names.
func (d *dirHandle) fetch(want int) {
	names, err := d.dir.Readdirnames(min(want, 1024))
	d.pending = names
	switch {
	case err == nil:
	case errors.Is(err, io.EOF), endOfDirectory(err):
		d.streamEnd = true
	default:
		d.streamErr = errno.FailHandle(err, "readdir")
	}
}

// entrySize bounds the JSON of one entry from above, so that a page stopped at pageBudget always fits a frame:
// a string takes at most 6 bytes per byte (\u escapes), a raw byte 4 ("255,"), the rest at most 256.
func entrySize(entry dirEntry) int {
	size := 256 + 6*len(entry.Name) + 4*len(entry.Raw)
	for key, value := range entry.Error {
		size += len(key) + 32
		if text, isText := value.(string); isText {
			size += 6 * len(text)
		}
	}
	return size
}

func readEntry(dir, raw string) dirEntry {
	name := decodeName(raw)
	entry := dirEntry{Name: name}
	if name != raw {
		bytes := rawNameBytes(raw)
		entry.Raw = make([]int, len(bytes))
		for i, b := range bytes {
			entry.Raw[i] = int(b)
		}
	}
	path := joinEntry(dir, name, onWindows)
	if info, err := lstatInfo(path); err != nil {
		entry.Error = errno.Fail(err, "lstat", path).JSON()
	} else {
		entry.Info = &info
	}
	return entry
}

// decodeName decodes a file name the way Node's Buffer toString does: UTF-8 with one U+FFFD per maximal
// invalid subpart (the WHATWG rule, which x/text's decoder follows; checked in the tests against Node).
func decodeName(raw string) string {
	if utf8.ValidString(raw) {
		return raw
	}
	decoded, err := unicode.UTF8.NewDecoder().String(raw)
	if err != nil {
		return raw
	}
	return decoded
}
