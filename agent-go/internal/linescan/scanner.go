// Package linescan locates a range of lines in a file fed in order, the way Durable's LineScanner does: byte
// offsets of the selection and the UTF-8 sizes of its text as `new TextDecoder().decode(file)` would produce
// it (a leading byte-order mark dropped, invalid bytes turned into U+FFFD).
package linescan

import "errors"

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER; line numbers beyond it are invalid there.
const maxSafeInteger = 1<<53 - 1

// ErrInvalidRange is returned for a line range LineScanner rejects.
var ErrInvalidRange = errors.New("Invalid line range")

// Result is the scan of lines [startLine, endLine) — the `LineScan` of the protocol.
type Result struct {
	// Newlines is the number of 0x0A bytes in the file.
	Newlines int64 `json:"newlines"`
	// Start and End are the byte offsets of the selection; the newline ending the last selected line is
	// not included.
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// FirstLineEnd is the offset where the first selected line ends.
	FirstLineEnd int64 `json:"firstLineEnd"`
	// LastLineStart is the offset where the last selected line starts.
	LastLineStart int64 `json:"lastLineStart"`
	// SelectedBytes and FirstLineBytes are the UTF-8 lengths of the decoded selection and first line.
	SelectedBytes  int64 `json:"selectedBytes"`
	FirstLineBytes int64 `json:"firstLineBytes"`
}

// Scanner scans lines [startLine, endLine) of a file whose bytes are pushed in order.
type Scanner struct {
	startLine, endLine int64 // endLine < 0 means no end
	position           int64 // bytes consumed so far
	newlines           int64
	lineStart          int64

	started                  bool
	start, end, firstLineEnd int64
	lastLineStart            int64
	hasLastLineStart         bool

	selectedBytes, firstLineBytes int64
	selection, firstLine          *DecodedLength // nil once that range has ended

	head     []byte // the first up to 3 bytes, held back to detect a byte-order mark
	released bool
	bom      bool
}

// New validates the range like LineScanner: startLine a safe integer >= 0, endLine (nil = to the end of the
// file) a safe integer > startLine. Numbers arrive as JSON doubles, so non-integers are rejected here.
func New(startLine float64, endLine *float64) (*Scanner, error) {
	if !isSafeInteger(startLine) || startLine < 0 {
		return nil, ErrInvalidRange
	}
	s := &Scanner{startLine: int64(startLine), endLine: -1, head: make([]byte, 0, 3)}
	if endLine != nil {
		if !isSafeInteger(*endLine) || *endLine <= startLine {
			return nil, ErrInvalidRange
		}
		s.endLine = int64(*endLine)
	}
	if s.startLine == 0 {
		s.begin(0)
	}
	return s, nil
}

func isSafeInteger(v float64) bool {
	return v == v && v >= -maxSafeInteger && v <= maxSafeInteger && v == float64(int64(v))
}

// Push feeds the next bytes of the file.
func (s *Scanner) Push(chunk []byte) {
	if !s.released {
		take := min(3-len(s.head), len(chunk))
		s.head = append(s.head, chunk[:take]...)
		chunk = chunk[take:]
		if len(s.head) < 3 {
			return
		}
		s.release()
	}
	s.process(chunk)
}

// Finish ends the file and returns the scan.
func (s *Scanner) Finish() Result {
	if !s.released {
		s.release()
	}
	size := s.position
	if !s.started {
		return Result{Newlines: s.newlines, Start: size, End: size, FirstLineEnd: size, LastLineStart: size}
	}
	if s.firstLine != nil {
		s.endFirstLine(size)
	}
	if s.selection != nil {
		s.endSelection(size)
	}
	last := s.lineStart
	if s.hasLastLineStart {
		last = s.lastLineStart
	}
	return Result{
		Newlines:       s.newlines,
		Start:          s.start,
		End:            s.end,
		FirstLineEnd:   s.firstLineEnd,
		LastLineStart:  last,
		SelectedBytes:  s.selectedBytes,
		FirstLineBytes: s.firstLineBytes,
	}
}

func (s *Scanner) release() {
	s.released = true
	s.bom = len(s.head) == 3 && s.head[0] == 0xEF && s.head[1] == 0xBB && s.head[2] == 0xBF
	s.process(s.head)
}

// singleLine reports whether the range selects exactly one line.
func (s *Scanner) singleLine() bool { return s.endLine >= 0 && s.startLine == s.endLine-1 }

func (s *Scanner) begin(at int64) {
	s.started = true
	s.start = at
	if s.singleLine() {
		s.lastLineStart, s.hasLastLineStart = at, true
	}
	s.selection = &DecodedLength{}
	s.firstLine = &DecodedLength{}
}

func (s *Scanner) process(chunk []byte) {
	base := s.position
	from := 0
	for i, b := range chunk {
		if b != '\n' {
			continue
		}
		s.feed(chunk[from:i], base+int64(from))
		line := s.newlines
		if line == s.startLine && s.firstLine != nil {
			s.endFirstLine(base + int64(i))
		}
		if s.endLine >= 0 && line == s.endLine-1 && s.selection != nil {
			s.endSelection(base + int64(i))
		}
		// A newline between selected lines belongs to the selection.
		s.feed(chunk[i:i+1], base+int64(i))
		s.newlines++
		s.lineStart = base + int64(i) + 1
		if s.newlines == s.startLine {
			s.begin(s.lineStart)
		}
		if s.endLine >= 0 && s.newlines == s.endLine-1 {
			s.lastLineStart, s.hasLastLineStart = s.lineStart, true
		}
		from = i + 1
	}
	s.feed(chunk[from:], base+int64(from))
	s.position += int64(len(chunk))
}

// feed counts bytes at file offset `at` into the open ranges; a byte-order mark is counted by neither (the
// decoded text drops it) although offsets include it.
func (s *Scanner) feed(bytes []byte, at int64) {
	if s.bom && at < 3 {
		skip := min(int(3-at), len(bytes))
		bytes = bytes[skip:]
	}
	if len(bytes) == 0 {
		return
	}
	if s.selection != nil {
		s.selectedBytes += int64(s.selection.Push(bytes))
	}
	if s.firstLine != nil {
		s.firstLineBytes += int64(s.firstLine.Push(bytes))
	}
}

func (s *Scanner) endFirstLine(at int64) {
	s.firstLineEnd = at
	s.firstLineBytes += int64(s.firstLine.Flush())
	s.firstLine = nil
}

func (s *Scanner) endSelection(at int64) {
	s.end = at
	s.selectedBytes += int64(s.selection.Flush())
	s.selection = nil
}
