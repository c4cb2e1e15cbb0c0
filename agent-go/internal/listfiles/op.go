// Package listfiles serves the listFiles operation (spec/semantics.md §19, spec/protocol.md §7.6): every file
// below a directory that the ignore rules keep, in byte order of the paths, streamed to the client in pages.
//
// The files of the package are the rooms of the job: op.go (the request, the pages), walk.go (the parallel walk
// in listing order), rules.go (which ignore files count, and their precedence), patterns.go (an ignore file's
// lines) and wildmatch.go (git's pattern matching).
package listfiles

import (
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"golang.org/x/text/encoding/unicode"
)

// Page bounds (LF18).
const (
	// PagePaths is the most paths one page event carries.
	PagePaths = 4096
	// PageBytes bounds a page's payload (a single longer path gets a page of its own).
	PageBytes = 256 << 10
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER: every number the client sends is a double.
const maxSafeInteger = 1<<53 - 1

// request is listFiles' JSON.
type request struct {
	Path   *string  `json:"path"`
	Glob   []string `json:"glob"`
	Hidden *bool    `json:"hidden"`
	Ignore *bool    `json:"ignore"`
	Limit  *float64 `json:"limit"`
}

// Handle serves one listFiles request to its end; the server runs it on a goroutine of its own.
func Handle(call *proto.Call) (proto.Reply, error) {
	var args request
	if f := call.Decode(&args); f != nil {
		return proto.Reply{}, f
	}
	if args.Path == nil || *args.Path == "" || strings.ContainsRune(*args.Path, 0) {
		return proto.Reply{}, proto.Invalid("listFiles needs path")
	}
	limit := 0
	if args.Limit != nil {
		l := *args.Limit
		if math.IsNaN(l) || l < 1 || l > maxSafeInteger || l != math.Trunc(l) {
			return proto.Reply{}, proto.Invalid("listFiles limit must be a positive safe integer")
		}
		limit = int(l)
	}
	opts, none := NewOptions(args.Glob, args.Hidden == nil || *args.Hidden, args.Ignore == nil || *args.Ignore)
	root := *args.Path
	if f := CheckRoot(root); f != nil {
		return proto.Reply{}, f
	}
	if none {
		// Only comments and blank lines: nothing is selected.
		return proto.Reply{JSON: map[string]any{"truncated": false}, Bulk: true}, nil
	}
	return run(call, root, opts, limit)
}

// CheckRoot fails the way Node's scandir of root would: missing, not a directory, or unreadable.
func CheckRoot(root string) *proto.Failure {
	info, err := os.Stat(root)
	if err != nil {
		return errno.Fail(err, "scandir", root)
	}
	if !info.IsDir() {
		return errno.New("ENOTDIR", "scandir", root)
	}
	f, err := openDir(root)
	if err != nil {
		return errno.Fail(err, "scandir", root)
	}
	defer f.Close()
	if _, err := f.ReadDir(1); err != nil && !errors.Is(err, io.EOF) {
		return errno.Fail(err, "scandir", root)
	}
	return nil
}

// pager collects paths into page events.
type pager struct {
	call      *proto.Call
	limit     int
	total     int
	truncated bool
	page      []byte
	count     int
}

// errEnough ends the walk once the limit is reached and one more path proved the listing truncated.
var errEnough = errors.New("limit reached")

// add appends one path (raw bytes, in two parts) to the current page, sending the page when it is full.
func (p *pager) add(dir, name string) error {
	if p.limit > 0 && p.total == p.limit {
		p.truncated = true
		return errEnough
	}
	if !utf8.ValidString(name) || !utf8.ValidString(dir) {
		dir, name = "", DecodeName(dir+name)
	}
	if len(p.page)+len(dir)+len(name)+1 > PageBytes {
		// Sent before it would outgrow its buffer, so a page never holds more memory than PageBytes (a single
		// path longer than that still gets a page of its own).
		if err := p.flush(); err != nil {
			return err
		}
	}
	p.page = append(p.page, dir...)
	p.page = append(p.page, name...)
	p.page = append(p.page, 0)
	p.count++
	p.total++
	if p.count >= PagePaths {
		return p.flush()
	}
	return nil
}

// flush sends the current page, if any. Pages go to the bulk queue: a slow reader holds the walk back.
func (p *pager) flush() error {
	if p.count == 0 {
		return nil
	}
	if p.call.Control.Aborted() {
		return errStopped
	}
	page, count, first := p.page, p.count, p.total-p.count
	p.page, p.count = make([]byte, 0, PageBytes), 0
	// `first` also keeps every page's JSON distinct, so the writer never joins two pages into one frame.
	return p.call.Events.Emit(proto.BulkQueue, map[string]any{"kind": "page", "first": first, "count": count}, page)
}

// run walks the tree, stopping when the request is cancelled.
func run(call *proto.Call, root string, opts Options, limit int) (proto.Reply, error) {
	stop := make(chan struct{})
	finished := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchAbort(call.Control, stop, finished)
	}()
	p := &pager{call: call, limit: limit, page: make([]byte, 0, PageBytes)}
	err := Walk(root, opts, stop, p.add)
	close(finished)
	<-watched
	switch {
	case err == nil || errors.Is(err, errEnough):
		err = p.flush()
	}
	if err != nil {
		if errors.Is(err, errStopped) || call.Control.Aborted() {
			return proto.Reply{}, proto.Aborted("aborted")
		}
		return proto.Reply{}, err
	}
	return proto.Reply{JSON: map[string]any{"truncated": p.truncated}, Bulk: true}, nil
}

// watchAbort closes stop when the control is aborted, or returns when finished closes.
func watchAbort(ctl *proto.Control, stop, finished chan struct{}) {
	for {
		changed := ctl.Changed()
		if ctl.Aborted() {
			close(stop)
			return
		}
		select {
		case <-changed:
		case <-finished:
			return
		}
	}
}

// DecodeName decodes a path the way Node decodes file names: UTF-8 with one U+FFFD per maximal invalid subpart.
func DecodeName(raw string) string {
	decoded, err := unicode.UTF8.NewDecoder().String(raw)
	if err != nil {
		return raw
	}
	return decoded
}
