package linescan

// DecodedLength counts the UTF-8 bytes a WHATWG UTF-8 decoder (TextDecoder, replacement mode) produces for a
// stream of bytes, without building the text. Invalid input becomes one U+FFFD (3 bytes) per maximal subpart:
// a valid prefix of a multi-byte sequence cut short counts once, and the byte that cut it is read again.
// Go's unicode/utf8 replaces per byte instead, so it cannot be used here.
//
// The zero value is a decoder at the start of a stream.
type DecodedLength struct {
	needed, seen int  // bytes the current sequence still needs, and has
	lower, upper byte // allowed range of the next continuation byte (0, 0 = the default 80..BF)
}

const replacementLength = 3 // len("\uFFFD")

// Push feeds bytes and returns the decoded length of every code point they complete. Bytes of a sequence that
// is still incomplete at the end are held until the next Push or Flush.
func (d *DecodedLength) Push(bytes []byte) int {
	total := 0
	for i := 0; i < len(bytes); i++ {
		b := bytes[i]
		if d.needed == 0 {
			total += d.lead(b)
			continue
		}
		lower, upper := d.bounds()
		if b < lower || b > upper {
			// The sequence so far is a maximal subpart: one U+FFFD, then b starts afresh.
			d.reset()
			total += replacementLength
			i--
			continue
		}
		d.lower, d.upper = 0, 0
		d.seen++
		if d.seen == d.needed {
			total += d.needed + 1
			d.reset()
		}
	}
	return total
}

// Flush ends the stream: an incomplete sequence becomes one U+FFFD. It returns the length that adds.
func (d *DecodedLength) Flush() int {
	if d.needed == 0 {
		return 0
	}
	d.reset()
	return replacementLength
}

// lead handles a byte outside a sequence and returns the length it completes (0 if it starts a sequence).
func (d *DecodedLength) lead(b byte) int {
	switch {
	case b <= 0x7F:
		return 1
	case b >= 0xC2 && b <= 0xDF:
		d.needed = 1
	case b >= 0xE0 && b <= 0xEF:
		d.needed = 2
		if b == 0xE0 {
			d.lower = 0xA0 // no overlong forms
		} else if b == 0xED {
			d.upper = 0x9F // no surrogates
		}
	case b >= 0xF0 && b <= 0xF4:
		d.needed = 3
		if b == 0xF0 {
			d.lower = 0x90 // no overlong forms
		} else if b == 0xF4 {
			d.upper = 0x8F // nothing above U+10FFFF
		}
	default:
		return replacementLength
	}
	return 0
}

func (d *DecodedLength) bounds() (lower, upper byte) {
	lower, upper = 0x80, 0xBF
	if d.lower != 0 {
		lower = d.lower
	}
	if d.upper != 0 {
		upper = d.upper
	}
	return lower, upper
}

func (d *DecodedLength) reset() { *d = DecodedLength{} }
