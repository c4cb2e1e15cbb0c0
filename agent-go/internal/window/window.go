// Package window holds a command's decoded output between paced deliveries and omits what the caller would
// throw away anyway.
//
// The caller (Durable's ShellExecOptions.window) keeps only the last maxBytes bytes and maxLines lines of the
// output. Text may therefore be left out when the text after it already proves it lies outside that tail: the
// rest holds more than maxBytes bytes or more than maxLines newlines. The omission is reported as a Skip on the
// next delivery, which then carries everything held after the omission.
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

type segment struct {
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
	segments  []segment
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

// Push adds decoded text of a stream. Text must be valid UTF-8 (decoder output). Held text is trimmed once it
// is well above the window, so memory stays proportional to the window, not to the output.
func (w *Window) Push(stream string, text []byte) {
	if len(text) == 0 {
		return
	}
	if n := len(w.segments); n > 0 && w.segments[n-1].stream == stream {
		w.segments[n-1].text = append(w.segments[n-1].text, text...)
	} else {
		w.segments = append(w.segments, segment{stream: stream, text: append([]byte(nil), text...)})
	}
	w.bytes += int64(len(text))
	w.newlines += int64(bytes.Count(text, []byte{'\n'}))
	if w.bytes > 2*w.keepBytes+64<<10 || w.newlines > 2*w.keepLines+1024 {
		w.trim()
	}
}

// Empty reports whether nothing is held.
func (w *Window) Empty() bool { return len(w.segments) == 0 }

// Take removes and returns everything held, as deliveries in arrival order: after an omission, one delivery
// with all held text (named after the last stream) carrying the Skip; otherwise one delivery per run of one
// stream. Text outside the window is omitted first.
func (w *Window) Take() []Delivery {
	w.trim()
	if len(w.segments) == 0 {
		return nil
	}
	var out []Delivery
	if w.skip.Bytes > 0 {
		text := make([]byte, 0, w.bytes)
		for _, s := range w.segments {
			text = append(text, s.text...)
		}
		skip := w.skip
		out = []Delivery{{Stream: w.segments[len(w.segments)-1].stream, Text: text, Skipped: &skip}}
	} else {
		out = make([]Delivery, len(w.segments))
		for i, s := range w.segments {
			out[i] = Delivery{Stream: s.stream, Text: s.text}
		}
	}
	w.segments, w.bytes, w.newlines, w.skip = nil, 0, 0, Skip{}
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
	for _, s := range w.segments {
		end := base + int64(len(s.text))
		if offset < end {
			i := offset - base
			for i > 0 && !utf8.RuneStart(s.text[i]) {
				i--
			}
			// Segments start at character boundaries, so i == 0 is one.
			return base + i
		}
		base = end
	}
	return offset
}

// newlineFromEnd returns the offset of the k-th newline counted from the end (k >= 1, at most w.newlines).
func (w *Window) newlineFromEnd(k int64) int64 {
	end := w.bytes
	for i := len(w.segments) - 1; i >= 0; i-- {
		text := w.segments[i].text
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

// drop removes the first n held bytes and adds them to the pending skip.
func (w *Window) drop(n int64) {
	w.bytes -= n
	w.skip.Bytes += n
	for n > 0 {
		s := &w.segments[0]
		take := min(n, int64(len(s.text)))
		removed := s.text[:take]
		lines := int64(bytes.Count(removed, []byte{'\n'}))
		w.newlines -= lines
		w.skip.Newlines += lines
		w.skip.EndsWithNewline = removed[len(removed)-1] == '\n'
		n -= take
		if take == int64(len(s.text)) {
			w.segments = w.segments[1:]
			continue
		}
		// Copy the rest so the omitted text's memory is released.
		s.text = append([]byte(nil), s.text[take:]...)
	}
	if len(w.segments) == 0 {
		w.segments = nil
	}
}
