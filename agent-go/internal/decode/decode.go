// Package decode turns byte streams into text exactly as the WHATWG UTF-8 decoder does (`new TextDecoder()` in
// replacement mode), however the bytes are split into chunks.
//
// Go's unicode/utf8 replaces invalid input byte by byte; WHATWG replaces each maximal subpart of an ill-formed
// sequence with one U+FFFD and reprocesses the byte that broke it. Command output must match Node's decoding to
// the character, so the state machine of the Encoding Standard (§ 9.1.1 "UTF-8 decoder") is written out here.
package decode

import "unicode/utf8"

// replacement is U+FFFD encoded as UTF-8.
const replacement = "\uFFFD"

// bom is U+FEFF encoded as UTF-8; it only ever appears as these three bytes.
const bom = "\uFEFF"

// Decoder is a streaming UTF-8 decoder. The zero value is a range decoder: it keeps every U+FEFF. Use NewStream
// for command output, which drops one byte order mark at the very start of the stream.
type Decoder struct {
	// codePoint, needed, seen, lower and upper are the Encoding Standard's "UTF-8 code point", "bytes
	// needed", "bytes seen", "lower boundary" and "upper boundary".
	codePoint rune
	needed    int
	seen      int
	lower     byte
	upper     byte
	// dropBOM is true while a leading U+FEFF must still be removed: the stream drops it from its first
	// non-empty output only.
	dropBOM bool
}

// NewStream returns a decoder for one output stream: like `new TextDecoder()` over all bytes at once, it drops
// a UTF-8 byte order mark at the start (even when its bytes arrive in different chunks) and keeps any later
// U+FEFF. UTF-16 byte order marks are never sniffed.
func NewStream() *Decoder { return &Decoder{dropBOM: true} }

// Decode decodes the next chunk. A sequence cut off at the end of the chunk is held back until the next call.
// The result is a fresh slice of valid UTF-8 (possibly empty).
func (d *Decoder) Decode(chunk []byte) []byte {
	if d.needed == 0 && utf8.Valid(chunk) {
		// The common case: whole, valid text.
		return d.trimBOM(append([]byte(nil), chunk...))
	}
	out := make([]byte, 0, len(chunk)+utf8.UTFMax)
	for i := 0; i < len(chunk); {
		if d.needed == 0 {
			// Fast path: a run of complete, valid sequences is copied as is.
			j := validPrefix(chunk[i:])
			if j > 0 {
				out = append(out, chunk[i:i+j]...)
				i += j
				continue
			}
		}
		if d.step(chunk[i], &out) {
			i++
		}
	}
	return d.trimBOM(out)
}

// Flush ends the stream: a sequence still incomplete becomes one U+FFFD.
func (d *Decoder) Flush() []byte {
	if d.needed == 0 {
		return nil
	}
	d.reset()
	return d.trimBOM([]byte(replacement))
}

// step feeds one byte to the state machine, appending any decoded text. It returns false when the byte must be
// processed again (it ended an ill-formed sequence and may start a new one).
func (d *Decoder) step(b byte, out *[]byte) bool {
	if d.needed == 0 {
		d.lower, d.upper = 0x80, 0xBF
		switch {
		case b < 0x80:
			*out = append(*out, b)
		case b >= 0xC2 && b <= 0xDF:
			d.needed, d.codePoint = 1, rune(b&0x1F)
		case b >= 0xE0 && b <= 0xEF:
			switch b {
			case 0xE0:
				d.lower = 0xA0
			case 0xED:
				d.upper = 0x9F
			}
			d.needed, d.codePoint = 2, rune(b&0x0F)
		case b >= 0xF0 && b <= 0xF4:
			switch b {
			case 0xF0:
				d.lower = 0x90
			case 0xF4:
				d.upper = 0x8F
			}
			d.needed, d.codePoint = 3, rune(b&0x07)
		default:
			*out = append(*out, replacement...)
		}
		return true
	}
	if b < d.lower || b > d.upper {
		// The bytes seen so far are a maximal subpart: one U+FFFD, and b is looked at again.
		d.reset()
		*out = append(*out, replacement...)
		return false
	}
	d.lower, d.upper = 0x80, 0xBF
	d.codePoint = d.codePoint<<6 | rune(b&0x3F)
	d.seen++
	if d.seen == d.needed {
		*out = utf8.AppendRune(*out, d.codePoint)
		d.reset()
	}
	return true
}

func (d *Decoder) reset() {
	d.codePoint, d.needed, d.seen, d.lower, d.upper = 0, 0, 0, 0x80, 0xBF
}

// trimBOM removes the leading U+FEFF from the first non-empty output of a stream decoder.
func (d *Decoder) trimBOM(out []byte) []byte {
	if !d.dropBOM || len(out) == 0 {
		return out
	}
	d.dropBOM = false
	if len(out) >= len(bom) && string(out[:len(bom)]) == bom {
		return out[len(bom):]
	}
	return out
}

// validPrefix returns the length of the longest prefix of p made of complete, valid UTF-8 sequences. Go's
// notion of valid UTF-8 (no surrogates, no overlongs, at most U+10FFFF) is the WHATWG one, so valid input
// needs no state machine.
func validPrefix(p []byte) int {
	n := 0
	for n < len(p) {
		if p[n] < utf8.RuneSelf {
			n++
			continue
		}
		r, size := utf8.DecodeRune(p[n:])
		if r == utf8.RuneError && size <= 1 {
			return n
		}
		n += size
	}
	return n
}

// String decodes all of p at once, like `new TextDecoder().decode(p)` (leading BOM dropped).
func String(p []byte) string {
	d := NewStream()
	out := d.Decode(p)
	return string(append(out, d.Flush()...))
}
