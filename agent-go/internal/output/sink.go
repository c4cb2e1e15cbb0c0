package output

import (
	"io"
)

// sink writes a batch of byte slices, in order, completely or not at all (an error).
type sink interface {
	writeVec(parts [][]byte) error
}

// newSink picks the vectored file writer where the platform has one, and a copying writer otherwise.
func newSink(w io.Writer) sink {
	if s := newVectorSink(w); s != nil {
		return s
	}
	return &copySink{w: w}
}

// copySink joins a batch into one buffer and writes it with one Write call.
type copySink struct {
	w   io.Writer
	buf []byte
}

func (c *copySink) writeVec(parts [][]byte) error {
	if len(parts) == 1 {
		_, err := c.w.Write(parts[0])
		return err
	}
	c.buf = c.buf[:0]
	for _, p := range parts {
		c.buf = append(c.buf, p...)
	}
	_, err := c.w.Write(c.buf)
	if cap(c.buf) > 4*DefaultBufferSize {
		c.buf = nil
	}
	return err
}
