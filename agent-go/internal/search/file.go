package search

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync/atomic"
	"unicode/utf8"

	"github.com/outpost-dev/outpost/agent-go/internal/listfiles"
)

// Sizes of one file's search (SF9, SF16).
const (
	// BlockSize is how much of a file is read at a time.
	BlockSize = 256 << 10
	// MaxLine is the longest line searched; a file with a longer one is skipped.
	MaxLine = 8 << 20
)

// Match is one matching line (SF6), as the page's JSON carries it.
type Match struct {
	Path       string   `json:"path"`
	Line       int      `json:"line"`
	Text       string   `json:"text"`
	Submatches []Span   `json:"submatches"`
	Before     []string `json:"before"`
	After      []string `json:"after"`
}

// Settings are a search's per-file options.
type Settings struct {
	Before, After int
	// MaxCount bounds the matching lines of one file (0: no bound).
	MaxCount int
}

// outcome is how one file's search ended.
type outcome int

const (
	searched outcome = iota
	// binary: a NUL byte, no match (SF8).
	binary
	// skipped: unreadable or a line over MaxLine (SF9, SF10), counted.
	skipped
	// stopped: the search was stopped or the consumer went away.
	stopped
)

// errStop ends a file's search when the whole search stops; errTooLong when a line outgrows MaxLine.
var (
	errStop    = errors.New("search stopped")
	errTooLong = errors.New("line too long")
)

// fileSearch is the state of one file's search: a window of its bytes holding whole lines being searched, the
// lines kept for before-context, and the match still collecting after-context.
type fileSearch struct {
	m    *Matcher
	set  Settings
	path string
	emit func(Match) error
	stop *atomic.Bool

	data []byte
	// floor is where the lines that may still be given as before-context start (after the last line given).
	floor int
	// lineNo is the number of the line starting at the search position.
	lineNo int
	count  int
	// lower is the ASCII lowercase of the region being searched, for a folded prefilter (reused).
	lower []byte
	// open is the last match while it collects after-context; afterLeft how many lines it still takes.
	open      *Match
	afterLeft int
	spans     []Span
}

// searchFile searches the open file f of the given size, handing its matches to emit in line order. buf is the
// searcher's block buffer (BlockSize bytes), reused from file to file.
func searchFile(f *os.File, size int64, buf []byte, path string, m *Matcher, set Settings, stop *atomic.Bool,
	emit func(Match) error,
) outcome {
	want := len(buf)
	if size < int64(want) {
		// One read for a small file (the usual case) and one more to see its end: it may have grown meanwhile.
		want = int(size) + 1
	}
	n, err := io.ReadFull(f, buf[:want])
	whole := err == io.EOF || err == io.ErrUnexpectedEOF
	if err != nil && !whole {
		return skipped
	}
	if !whole {
		// Larger than a block: read it once for a NUL or an overlong line before any match is handed on.
		if o := prescan(f, buf, n); o != searched {
			return o
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return skipped
		}
		n = 0
	} else if bytes.IndexByte(buf[:n], 0) >= 0 {
		return binary
	}
	s := &fileSearch{m: m, set: set, path: path, emit: emit, stop: stop, data: buf[:n], lineNo: 1}
	if whole {
		start := bomLength(s.data)
		s.floor = start
		return s.finish(s.region(start, n))
	}
	return s.finish(s.stream(f))
}

// finish turns the search's error into an outcome, handing on the last open match.
func (s *fileSearch) finish(err error) outcome {
	if err == nil {
		err = s.close()
	}
	switch {
	case err == nil:
		return searched
	case errors.Is(err, errStop):
		return stopped
	default:
		return skipped
	}
}

// prescan reads a file whose first n bytes are in buf to its end, looking for a NUL byte and lines over MaxLine.
func prescan(f *os.File, buf []byte, n int) outcome {
	lineLen := 0
	var err error
	for {
		chunk := buf[:n]
		if bytes.IndexByte(chunk, 0) >= 0 {
			return binary
		}
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				lineLen += len(chunk)
				break
			}
			if lineLen+i > MaxLine {
				return skipped
			}
			lineLen, chunk = 0, chunk[i+1:]
		}
		if lineLen > MaxLine {
			return skipped
		}
		if err == io.EOF {
			return searched
		}
		if err != nil {
			return skipped
		}
		n, err = f.Read(buf)
	}
}

// bomLength is the length of a UTF-8 byte order mark at the start of data: ripgrep leaves it out of the first line.
func bomLength(data []byte) int {
	if bytes.HasPrefix(data, []byte("\xEF\xBB\xBF")) {
		return 3
	}
	return 0
}

// stream searches f block by block, keeping the partial last line and the lines before-context may need.
func (s *fileSearch) stream(f *os.File) error {
	s.data = s.data[:0]
	start := 0
	first := true
	for {
		if s.stop.Load() {
			return errStop
		}
		if len(s.data)-start > MaxLine {
			// The file changed since the prescan: no longer within the bounds.
			return errTooLong
		}
		if len(s.data) == cap(s.data) {
			grown := make([]byte, len(s.data), 2*cap(s.data))
			copy(grown, s.data)
			s.data = grown
		}
		n, err := f.Read(s.data[len(s.data):cap(s.data)])
		s.data = s.data[:len(s.data)+n]
		if first && len(s.data) >= 3 {
			first = false
			start = bomLength(s.data)
			s.floor = start
		}
		eof := err == io.EOF || (err == nil && n == 0)
		if err != nil && !eof {
			return err
		}
		end := len(s.data)
		if !eof {
			end = bytes.LastIndexByte(s.data, '\n') + 1
			if end <= start {
				continue
			}
		}
		if err := s.region(start, end); err != nil || eof || (s.done() && s.afterLeft == 0) {
			return err
		}
		start = s.compact(end)
	}
}

// compact moves the unsearched tail (from end) and the lines before it that before-context may still need to the
// front of the window, returning where the tail now starts.
func (s *fileSearch) compact(end int) int {
	keep := end
	for range s.set.Before {
		if keep <= s.floor {
			break
		}
		keep = bytes.LastIndexByte(s.data[:keep-1], '\n') + 1
	}
	keep = max(keep, s.floor)
	n := copy(s.data, s.data[keep:])
	s.data = s.data[:n]
	s.floor = max(0, s.floor-keep)
	return end - keep
}

// region searches the whole lines in data[start:end] (at the end of the file, the last one may lack its LF).
func (s *fileSearch) region(start, end int) error {
	var lower []byte
	if s.m.folded {
		s.lower = lowerASCII(s.lower, s.data[start:end])
		lower = s.lower
	}
	pos := start
	for pos < end {
		if s.stop.Load() {
			return errStop
		}
		if s.afterLeft > 0 || s.done() {
			if s.afterLeft == 0 {
				return nil
			}
			next, err := s.oneLine(pos, end)
			if err != nil {
				return err
			}
			pos = next
			continue
		}
		var lowerRest []byte
		if lower != nil {
			lowerRest = lower[pos-start:]
		}
		c := s.m.candidate(s.data[pos:end], lowerRest)
		if c == end-pos && s.data[end-1] == '\n' {
			// An empty match after the last LF: no line starts there.
			c = -1
		}
		if c < 0 {
			s.lineNo += bytes.Count(s.data[pos:end], newline)
			return nil
		}
		lineStart := pos + bytes.LastIndexByte(s.data[pos:pos+c], '\n') + 1
		s.lineNo += bytes.Count(s.data[pos:lineStart], newline)
		next, err := s.oneLine(lineStart, end)
		if err != nil {
			return err
		}
		pos = next
	}
	return nil
}

var newline = []byte{'\n'}

// oneLine handles the line starting at start: a match, after-context of the open match, or nothing. It returns
// where the next line starts.
func (s *fileSearch) oneLine(start, end int) (int, error) {
	lineEnd := end
	i := bytes.IndexByte(s.data[start:end], '\n')
	terminated := i >= 0
	if terminated {
		lineEnd = start + i
	}
	next := min(lineEnd+1, end)
	line := s.data[start:lineEnd]
	number := s.lineNo
	s.lineNo++
	if !s.done() {
		s.spans = s.m.lineMatches(line, s.spans[:0])
		matched := len(s.spans) > 0
		if n := len(s.spans); matched && !terminated && s.spans[n-1].Start == len(line) {
			// The file's last line has no LF: as ripgrep, an empty match at its very end makes the line match
			// but is not reported.
			s.spans = s.spans[:n-1]
		}
		if matched {
			if err := s.match(line, number, start); err != nil {
				return next, err
			}
			s.floor = next
			return next, nil
		}
	}
	if s.afterLeft > 0 {
		s.open.After = append(s.open.After, decode(line))
		s.afterLeft--
		s.floor = next
		if s.afterLeft == 0 {
			return next, s.close()
		}
	}
	return next, nil
}

// done tells whether maxCount matching lines were found.
func (s *fileSearch) done() bool { return s.set.MaxCount > 0 && s.count >= s.set.MaxCount }

// match records a matching line starting at start, with its before-context, as the open match.
func (s *fileSearch) match(line []byte, number, start int) error {
	if err := s.close(); err != nil {
		return err
	}
	before := []string{}
	if s.set.Before > 0 {
		from := start
		for range s.set.Before {
			if from <= s.floor {
				break
			}
			from = bytes.LastIndexByte(s.data[:from-1], '\n') + 1
		}
		from = max(from, s.floor)
		for from < start {
			i := bytes.IndexByte(s.data[from:start], '\n')
			before = append(before, decode(s.data[from:from+i]))
			from += i + 1
		}
	}
	s.count++
	s.open = &Match{
		Path: s.path, Line: number, Text: decode(line), Submatches: append([]Span(nil), s.spans...),
		Before: before, After: []string{},
	}
	s.afterLeft = s.set.After
	return nil
}

// close hands on the open match.
func (s *fileSearch) close() error {
	if s.open == nil {
		return nil
	}
	m := *s.open
	s.open, s.afterLeft = nil, 0
	return s.emit(m)
}

// decode turns a line's bytes into text as the spec decodes text (SF5).
func decode(line []byte) string {
	if utf8.Valid(line) {
		return string(line)
	}
	return listfiles.DecodeName(string(line))
}
