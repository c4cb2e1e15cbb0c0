// Package frame encodes and decodes protocol 1 frames:
//
//	u32 length | u8 type | u32 id | u32 jsonLength | JSON object | raw payload
//
// All integers are big-endian; length counts every byte after itself and is at most MaxFrame.
package frame

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Type is a frame's type byte.
type Type uint8

// The frame types of protocol 1.
const (
	// Request is a client → agent operation; its JSON names the op.
	Request Type = 1
	// Result finishes a request successfully.
	Result Type = 2
	// Error finishes a request with {code, message, ...}.
	Error Type = 3
	// Event reports progress of a running request (exec output, watch changes).
	Event Type = 4
	// Cancel aborts ({}) or kills ({"mode":"kill"}) a running request.
	Cancel Type = 5
	// Ping keeps the connection alive; id 0, JSON {}.
	Ping Type = 6
)

// Sizes and limits of protocol 1.
const (
	// PrefixSize is the size of the length prefix.
	PrefixSize = 4
	// HeaderSize is type + id + jsonLength, the part of length that is not JSON or payload.
	HeaderSize = 9
	// MaxFrame bounds the length field (so a whole frame on the wire is at most MaxFrame + 4 bytes).
	MaxFrame = 16 << 20
	// MaxPayload is the largest payload the agent puts in a reply, leaving room for the JSON.
	MaxPayload = MaxFrame - 64<<10
	// ReadBufferSize is the size of the buffered reader over the input.
	ReadBufferSize = 1 << 20
)

// emptyObject stands in for a frame whose jsonLength is 0.
var emptyObject = []byte("{}")

// ErrFraming marks input that is not a well-formed frame stream; the connection cannot continue after it.
var ErrFraming = errors.New("framing error")

// ErrTooLarge is returned when a frame to be written would exceed MaxFrame.
var ErrTooLarge = errors.New("frame too large")

// Frame is one decoded frame. JSON is never empty: a jsonLength of 0 decodes as {}.
type Frame struct {
	Type    Type
	ID      uint32
	JSON    []byte
	Payload []byte
	// Body, in a decoded frame, is the memory JSON and Payload live in (from the Reader's Alloc), so its owner
	// can recycle it once neither is used any more. Writers ignore it.
	Body []byte
	// Written, when set on a frame given to the output writer, is called once the frame was written or dropped:
	// its payload may be recycled from then on. Decoders leave it nil.
	Written func()
}

// Size returns the frame's length field: header + JSON + payload.
func (f *Frame) Size() int { return HeaderSize + len(f.JSON) + len(f.Payload) }

// directRead is the part of a body above which the rest of the body is read straight into its own memory
// rather than through the buffer (one copy less for bulk payloads, one read per frame more for small ones).
const directRead = 64 << 10

// maxEmptyReads is how many reads in a row may return neither bytes nor an error.
const maxEmptyReads = 100

// Reader decodes frames from a byte stream. Small frames are read through a buffer, many per read; the bulk of
// a large payload is read directly into the frame's memory.
type Reader struct {
	// Alloc, when set, provides the memory of each frame body (n bytes, contents overwritten); nil means make.
	Alloc func(n int) []byte

	src io.Reader
	buf []byte
	// buf[r:w] holds received bytes not yet decoded.
	r, w int
}

// NewReader returns a Reader over r, buffered with ReadBufferSize bytes.
func NewReader(r io.Reader) *Reader {
	return &Reader{src: r, buf: make([]byte, ReadBufferSize)}
}

// fill reads until at least n bytes (n <= len(r.buf)) are buffered. Its errors are the source's, with a bare
// io.EOF when the input ended before n bytes.
func (r *Reader) fill(n int) error {
	if r.w-r.r >= n {
		return nil
	}
	if r.r > 0 && len(r.buf)-r.r < n {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	for empty := 0; r.w-r.r < n; {
		m, err := r.src.Read(r.buf[r.w:])
		r.w += m
		if r.w-r.r >= n {
			return nil
		}
		if err != nil {
			return err
		}
		if m > 0 {
			empty = 0
		} else if empty++; empty >= maxEmptyReads {
			// A reader that keeps returning nothing and no error would spin here forever (bufio's rule).
			return io.ErrNoProgress
		}
	}
	return nil
}

// readFull fills p from the buffer and then, for what is left, from the source.
func (r *Reader) readFull(p []byte) error {
	n := copy(p, r.buf[r.r:r.w])
	r.r += n
	if n == len(p) {
		return nil
	}
	rest := p[n:]
	if len(rest) < directRead {
		if err := r.fill(len(rest)); err != nil {
			return err
		}
		r.r += copy(rest, r.buf[r.r:r.w])
		return nil
	}
	_, err := io.ReadFull(r.src, rest)
	return err
}

// Next reads one frame. It returns io.EOF when the input ends cleanly before a length prefix, an error wrapping
// ErrFraming for a malformed frame, and an error wrapping io.ErrUnexpectedEOF when the input ends inside a frame.
// The JSON is not validated here: a request whose JSON does not parse is the server's business, not a framing
// error.
func (r *Reader) Next() (Frame, error) {
	if err := r.fill(PrefixSize); err != nil {
		if r.w == r.r && errors.Is(err, io.EOF) {
			return Frame{}, io.EOF
		}
		return Frame{}, fmt.Errorf("read frame length: %w", unexpected(err))
	}
	length := binary.BigEndian.Uint32(r.buf[r.r:])
	if length < HeaderSize || length > MaxFrame {
		return Frame{}, fmt.Errorf("%w: length %d outside %d..%d", ErrFraming, length, HeaderSize, MaxFrame)
	}
	if err := r.fill(PrefixSize + HeaderSize); err != nil {
		return Frame{}, fmt.Errorf("read frame header: %w", unexpected(err))
	}
	header := r.buf[r.r : r.r+PrefixSize+HeaderSize]
	typ := Type(header[PrefixSize])
	id := binary.BigEndian.Uint32(header[PrefixSize+1:])
	jsonLength := binary.BigEndian.Uint32(header[PrefixSize+5:])
	rest := length - HeaderSize
	if jsonLength > rest {
		return Frame{}, fmt.Errorf("%w: jsonLength %d exceeds frame length %d", ErrFraming, jsonLength, length)
	}
	r.r += PrefixSize + HeaderSize
	var body []byte
	if r.Alloc != nil {
		body = r.Alloc(int(rest))
	} else {
		body = make([]byte, rest)
	}
	if err := r.readFull(body); err != nil {
		return Frame{}, fmt.Errorf("read frame body: %w", unexpected(err))
	}
	f := Frame{Type: typ, ID: id, JSON: body[:jsonLength:jsonLength], Payload: body[jsonLength:], Body: body}
	if jsonLength == 0 {
		f.JSON = emptyObject
	}
	return f, nil
}

// unexpected turns a bare EOF inside a frame into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Header returns the 13 bytes that precede a frame's JSON: length, type, id, jsonLength. It fails with
// ErrTooLarge when the frame would exceed MaxFrame.
func Header(typ Type, id uint32, jsonLength, payloadLength int) ([PrefixSize + HeaderSize]byte, error) {
	var h [PrefixSize + HeaderSize]byte
	if jsonLength < 0 || payloadLength < 0 || jsonLength > MaxFrame || payloadLength > MaxFrame-HeaderSize-jsonLength {
		return h, fmt.Errorf("%w: %d bytes of JSON and %d of payload exceed %d", ErrTooLarge, jsonLength,
			payloadLength, MaxFrame)
	}
	binary.BigEndian.PutUint32(h[:], uint32(HeaderSize+jsonLength+payloadLength))
	h[PrefixSize] = byte(typ)
	binary.BigEndian.PutUint32(h[PrefixSize+1:], id)
	binary.BigEndian.PutUint32(h[PrefixSize+5:], uint32(jsonLength))
	return h, nil
}

// Write writes f to w as one frame. Nothing is written when the frame is too large.
func Write(w io.Writer, f Frame) error {
	h, err := Header(f.Type, f.ID, len(f.JSON), len(f.Payload))
	if err != nil {
		return err
	}
	for _, part := range [][]byte{h[:], f.JSON, f.Payload} {
		if len(part) == 0 {
			continue
		}
		if _, err := w.Write(part); err != nil {
			return fmt.Errorf("write frame: %w", err)
		}
	}
	return nil
}

// Encode returns f as the bytes of one frame.
func Encode(f Frame) ([]byte, error) {
	h, err := Header(f.Type, f.ID, len(f.JSON), len(f.Payload))
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(h)+len(f.JSON)+len(f.Payload))
	out = append(out, h[:]...)
	out = append(out, f.JSON...)
	return append(out, f.Payload...), nil
}
