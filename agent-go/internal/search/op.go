// Package search serves the searchFiles operation (spec/semantics.md §23, spec/protocol.md §7.7): the lines of the
// files below a directory that match a regular expression, walked with listFiles' walker and ignore rules,
// searched in parallel and streamed to the client in pages, in path order.
//
// The files of the package: op.go (the request, the pages), run.go (the ordered parallel search), file.go (one
// file's lines, context and binary check) and pattern.go (the pattern language and its fast paths).
package search

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/outpost-dev/outpost/agent-go/internal/errno"
	"github.com/outpost-dev/outpost/agent-go/internal/listfiles"
	"github.com/outpost-dev/outpost/agent-go/internal/pages"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// Page bounds (SF16).
const (
	// PageMatches is the most matches one page event carries.
	PageMatches = 1024
	// PageBytes bounds a page's payload (a single larger match gets a page of its own).
	PageBytes = 256 << 10
	// maxContext bounds before and after.
	maxContext = 1000
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER: every number the client sends is a double.
const maxSafeInteger = 1<<53 - 1

// request is searchFiles' JSON.
type request struct {
	Path       *string  `json:"path"`
	Pattern    *string  `json:"pattern"`
	Literal    bool     `json:"literal"`
	IgnoreCase bool     `json:"ignoreCase"`
	SmartCase  bool     `json:"smartCase"`
	WordRegexp bool     `json:"wordRegexp"`
	Glob       []string `json:"glob"`
	Hidden     *bool    `json:"hidden"`
	Ignore     *bool    `json:"ignore"`
	Before     *float64 `json:"before"`
	After      *float64 `json:"after"`
	MaxCount   *float64 `json:"maxCount"`
	Limit      *float64 `json:"limit"`
}

// Handle serves one searchFiles request to its end; the server runs it on a goroutine of its own.
func Handle(call *proto.Call) (proto.Reply, error) {
	var args request
	if f := call.Decode(&args); f != nil {
		return proto.Reply{}, f
	}
	if args.Path == nil || *args.Path == "" || strings.ContainsRune(*args.Path, 0) {
		return proto.Reply{}, proto.Invalid("searchFiles needs path")
	}
	if args.Pattern == nil {
		return proto.Reply{}, proto.Invalid("searchFiles needs pattern")
	}
	var set Settings
	var limit int
	for _, field := range []struct {
		name     string
		value    *float64
		min, max int
		into     *int
	}{
		{"before", args.Before, 0, maxContext, &set.Before},
		{"after", args.After, 0, maxContext, &set.After},
		{"maxCount", args.MaxCount, 1, maxSafeInteger, &set.MaxCount},
		{"limit", args.Limit, 1, maxSafeInteger, &limit},
	} {
		if field.value == nil {
			continue
		}
		v := *field.value
		if math.IsNaN(v) || v < float64(field.min) || v > float64(field.max) || v != math.Trunc(v) {
			return proto.Reply{}, proto.Invalid("searchFiles " + field.name + " is out of range")
		}
		*field.into = int(v)
	}
	m, err := Compile(*args.Pattern, PatternOptions{
		Literal: args.Literal, IgnoreCase: args.IgnoreCase, SmartCase: args.SmartCase, WordRegexp: args.WordRegexp,
	})
	if err != nil {
		return proto.Reply{}, proto.Invalid(err.Error())
	}
	opts, none := listfiles.NewOptions(args.Glob, args.Hidden == nil || *args.Hidden, args.Ignore == nil || *args.Ignore)
	opts.NoLinks = true
	root := *args.Path
	src, f := openRoot(root, opts, none)
	if f != nil {
		return proto.Reply{}, f
	}
	p := &matchPages{Pager: pages.New(call, pageFormat, limit)}
	skipped, err := run(call.Control, src, m, set, p.add)
	if err == nil || errors.Is(err, pages.ErrEnough) {
		err = p.Flush()
	}
	if err != nil {
		if errors.Is(err, errStop) || errors.Is(err, pages.ErrAborted) || call.Control.Aborted() {
			return proto.Reply{}, proto.Aborted("aborted")
		}
		return proto.Reply{}, err
	}
	return proto.Reply{JSON: map[string]any{"truncated": p.Truncated, "skipped": skipped}, Bulk: true}, nil
}

// openRoot checks the root (SF2) and says what to search: a directory's walk, or one file.
func openRoot(root string, opts listfiles.Options, none bool) (source, *proto.Failure) {
	info, err := os.Stat(root)
	if err != nil {
		return source{}, errno.Fail(err, "scandir", root)
	}
	switch {
	case info.IsDir():
		if f := listfiles.CheckRoot(root); f != nil {
			return source{}, f
		}
		return source{root: root, opts: opts, none: none}, nil
	case info.Mode().IsRegular():
		file, err := os.Open(root)
		if err != nil {
			return source{}, errno.Fail(err, "open", root)
		}
		file.Close()
		return source{root: root, file: filepath.Base(root)}, nil
	default:
		return source{}, proto.Invalid("searchFiles needs a directory or a regular file")
	}
}

// pageFormat frames searchFiles' pages: a JSON array of matches (SF16).
var pageFormat = pages.Format{Open: "[", Separator: ",", Close: "]", MaxItems: PageMatches, MaxBytes: PageBytes}

// matchPages gives a search's matches to the pages, each encoded as JSON in a scratch buffer reused for all.
type matchPages struct {
	*pages.Pager
	scratch []byte
}

// add appends one match.
func (m *matchPages) add(match Match) error {
	m.scratch = appendMatch(m.scratch[:0], &match)
	return m.Add(m.scratch)
}
