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
	"github.com/outpost-dev/outpost/agent-go/internal/pages"
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

// pageFormat frames listFiles' pages: each path ends with a NUL (LF18).
var pageFormat = pages.Format{MaxItems: PagePaths, MaxBytes: PageBytes}

// addPath is the walk's emit: one path (raw bytes, in two parts) into the pages, decoded as Node decodes names
// when it is not UTF-8.
func addPath(p *pages.Pager) func(dir, name string) error {
	return func(dir, name string) error {
		if !utf8.ValidString(name) || !utf8.ValidString(dir) {
			dir, name = "", DecodeName(dir+name)
		}
		return p.AddStrings(dir, name, "\x00")
	}
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
	p := pages.New(call, pageFormat, limit)
	err := Walk(root, opts, stop, addPath(p))
	close(finished)
	<-watched
	switch {
	case err == nil || errors.Is(err, pages.ErrEnough):
		err = p.Flush()
	}
	if err != nil {
		if errors.Is(err, errStopped) || errors.Is(err, pages.ErrAborted) || call.Control.Aborted() {
			return proto.Reply{}, proto.Aborted("aborted")
		}
		return proto.Reply{}, err
	}
	return proto.Reply{JSON: map[string]any{"truncated": p.Truncated}, Bulk: true}, nil
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
