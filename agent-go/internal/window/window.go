// Package window holds a command's decoded output between paced deliveries and omits what the caller would
// throw away anyway.
//
// The caller (Durable's ShellExecOptions.window) keeps only the last maxBytes bytes and maxLines lines of the
// output. Text may therefore be left out when the text after it already proves it lies outside that tail: the
// rest holds more than maxBytes bytes or more than maxLines newlines. The omission is reported as a Skip on the
// next delivery, which starts everything held after the omission (delivered as consecutive pieces that each fit
// a frame). Nothing is ever dropped without being counted: delivered bytes + skipped bytes = pushed bytes.
package window

import (
	"bytes"
	"math"
	"time"
	"unicode/utf8"
)

// Stdout is the stream name used when no held text names one.
const Stdout = "stdout"

// maxCount caps window sizes so that sums and doublings stay far from overflow.
const maxCount = int64(1) << 50

// Limits are the caller's window: the tail it keeps and how fast it wants samples.
type Limits struct {
	// MaxBytes and MaxLines are the UTF-8 bytes and lines the caller keeps at the end.
	MaxBytes float64
	MaxLines float64
	// MinInterval is the shortest pause between two deliveries.
	MinInterval time.Duration
	// BytesPerSecond makes each delivery also pause in proportion to its size.
	BytesPerSecond float64
}

// Skip describes omitted text, measured on the decoded text (U+FFFD counts 3 bytes).
type Skip struct {
	Bytes           int64 `json:"bytes"`
	Newlines        int64 `json:"newlines"`
	EndsWithNewline bool  `json:"endsWithNewline"`
}

// Delivery is one output event: text of a stream, preceded by an omission when Skipped is set.
type Delivery struct {
	Stream  string
	Text    []byte
	Skipped *Skip
}

// MaxPiece is the most text one delivery carries: held text is kept in pieces of at most this size and a delivery
// never joins pieces, so a delivery always fits a frame whatever the window (deliveries of a large window are
// many consecutive chunks). It is the size of one read under Node.
const MaxPiece = 64 << 10

// slack is what the held text may exceed the proven remainder by before it is trimmed (XW4), so trimming is
// amortized over many pushes.
const (
	slackBytes = 64 << 10
	slackLines = 1024
)

// piece is held text of one stream, at most MaxPiece bytes, starting at a character boundary.
type piece struct {
	stream string
	text   []byte
}

// Window holds undelivered output. It is not safe for concurrent use.
type Window struct {
	limits Limits
	// keepBytes and keepLines are the smallest remainder sizes that prove an omission lies outside the tail:
	// more than MaxBytes bytes, or more than MaxLines newlines.
	keepBytes int64
	keepLines int64
	pieces    []piece
	bytes     int64
	newlines  int64
	skip      Skip
}

// New returns an empty window. Negative sizes count as 0, a negative interval as 0 and a rate below 1 as 1.
func New(limits Limits) *Window {
	limits.MinInterval = max(limits.MinInterval, 0)
	if !(limits.BytesPerSecond >= 1) {
		limits.BytesPerSecond = 1
	}
	return &Window{limits: limits, keepBytes: keepCount(limits.MaxBytes), keepLines: keepCount(limits.MaxLines)}
}

// keepCount returns the least integer above limit (at least 1).
func keepCount(limit float64) int64 {
	if !(limit >= 0) {
		return 1
	}
	if limit >= float64(maxCount) {
		return maxCount
	}
	return int64(math.Floor(limit)) + 1
}

// Push adds decoded text of a stream. Text must be valid UTF-8 (decoder output); it is copied. Held text is
// trimmed once it exceeds the cap (Cap), so memory stays proportional to the window, not to the output.
func (w *Window) Push(stream string, text []byte) {
	for len(text) > 0 {
		if n := len(w.pieces); n > 0 && w.pieces[n-1].stream == stream && len(w.pieces[n-1].text) < MaxPiece {
			last := &w.pieces[n-1]
			room := pieceCut(text, MaxPiece-len(last.text))
			if room == 0 {
				// Not even one character fits: start a new piece.
				w.pieces = append(w.pieces, piece{stream: stream})
				continue
			}
			w.add(last, text[:room])
			text = text[room:]
			continue
		}
		w.pieces = append(w.pieces, piece{stream: stream})
	}
	if w.bytes > w.capBytes() || w.newlines > w.capLines() {
		w.trim()
	}
}

// add appends text to a piece and counts it.
func (w *Window) add(p *piece, text []byte) {
	p.text = append(p.text, text...)
	w.bytes += int64(len(text))
	w.newlines += int64(bytes.Count(text, []byte{'\n'}))
}

// pieceCut returns the longest prefix length of text of at most limit bytes that ends at a character boundary.
func pieceCut(text []byte, limit int) int {
	if len(text) <= limit {
		return len(text)
	}
	i := limit
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	return i
}

// capBytes and capLines are the most bytes and newlines the window holds after a Push (XW4):
// 2 × (⌊maxBytes⌋ + 1) + 64 KiB bytes and 2 × (⌊maxLines⌋ + 1) + 1024 newlines.
func (w *Window) capBytes() int64 { return 2*w.keepBytes + slackBytes }
func (w *Window) capLines() int64 { return 2*w.keepLines + slackLines }

// Held returns the bytes of text the window holds.
func (w *Window) Held() int64 { return w.bytes }

// Empty reports whether nothing is held.
func (w *Window) Empty() bool { return len(w.pieces) == 0 }

// Take removes and returns everything held, as deliveries in arrival order, each at most MaxPiece bytes. Text
// outside the window is omitted first. After an omission the held text is one logical chunk: its first delivery
// carries the Skip and every delivery of it is named after the last stream; otherwise each delivery has its own
// stream.
func (w *Window) Take() []Delivery {
	w.trim()
	if len(w.pieces) == 0 {
		return nil
	}
	out := make([]Delivery, len(w.pieces))
	for i, p := range w.pieces {
		out[i] = Delivery{Stream: p.stream, Text: p.text}
	}
	if w.skip.Bytes > 0 {
		skip := w.skip
		out[0].Skipped = &skip
		last := w.pieces[len(w.pieces)-1].stream
		for i := range out {
			out[i].Stream = last
		}
	}
	w.pieces, w.bytes, w.newlines, w.skip = nil, 0, 0, Skip{}
	return out
}

// Pause returns how long to wait after delivering n bytes: the minimum interval, or the time the caller's
// rate needs for what it keeps of them, whichever is longer.
func (w *Window) Pause(n int) time.Duration {
	kept := math.Min(float64(n), w.limits.MaxBytes)
	rate := time.Duration(math.Max(kept, 0) / w.limits.BytesPerSecond * float64(time.Second))
	return max(w.limits.MinInterval, rate)
}

// trim omits the longest prefix of the held text whose remainder still has at least keepBytes bytes or
// keepLines newlines. A cut by bytes moves back to a character boundary; a cut by lines falls right before
// the newline that leaves keepLines newlines.
func (w *Window) trim() {
	cut := int64(0)
	if w.bytes >= w.keepBytes {
		cut = w.charBoundaryAtOrBefore(w.bytes - w.keepBytes)
	}
	if w.newlines >= w.keepLines {
		cut = max(cut, w.newlineFromEnd(w.keepLines))
	}
	if cut > 0 {
		w.drop(cut)
	}
}

// charBoundaryAtOrBefore returns the largest character start at or before offset.
func (w *Window) charBoundaryAtOrBefore(offset int64) int64 {
	base := int64(0)
	for _, s := range w.pieces {
		end := base + int64(len(s.text))
		if offset < end {
			i := offset - base
			for i > 0 && !utf8.RuneStart(s.text[i]) {
				i--
			}
			// Pieces start at character boundaries, so i == 0 is one.
			return base + i
		}
		base = end
	}
	return offset
}

// newlineFromEnd returns the offset of the k-th newline counted from the end (k >= 1, at most w.newlines).
func (w *Window) newlineFromEnd(k int64) int64 {
	end := w.bytes
	for i := len(w.pieces) - 1; i >= 0; i-- {
		text := w.pieces[i].text
		start := end - int64(len(text))
		for len(text) > 0 {
			j := bytes.LastIndexByte(text, '\n')
			if j < 0 {
				break
			}
			k--
			if k == 0 {
				return start + int64(j)
			}
			text = text[:j]
		}
		end = start
	}
	return 0
}

// drop removes the first n held bytes and adds them to the pending skip. Whole pieces are released; a piece cut
// in the middle keeps its memory (at most MaxPiece) until it is delivered.
func (w *Window) drop(n int64) {
	w.bytes -= n
	w.skip.Bytes += n
	gone := 0
	for n > 0 {
		p := &w.pieces[gone]
		take := min(n, int64(len(p.text)))
		removed := p.text[:take]
		lines := int64(bytes.Count(removed, []byte{'\n'}))
		w.newlines -= lines
		w.skip.Newlines += lines
		w.skip.EndsWithNewline = removed[len(removed)-1] == '\n'
		n -= take
		if take == int64(len(p.text)) {
			gone++
			continue
		}
		p.text = p.text[take:]
	}
	// Copy the survivors down so the released pieces' memory is not kept by the slice.
	kept := copy(w.pieces, w.pieces[gone:])
	clear(w.pieces[kept:])
	w.pieces = w.pieces[:kept]
	if kept == 0 {
		w.pieces = nil
	}
}
