package frame

import (
	"bytes"
	"io"
	"testing"
)

// loopReader replays one encoded stream forever, like a peer that always has the next request ready.
type loopReader struct {
	data []byte
	at   int
}

func (l *loopReader) Read(p []byte) (int, error) {
	if l.at == len(l.data) {
		l.at = 0
	}
	n := copy(p, l.data[l.at:])
	l.at += n
	return n, nil
}

func benchmarkNext(b *testing.B, f Frame, perStream int) {
	var stream bytes.Buffer
	for range perStream {
		if err := Write(&stream, f); err != nil {
			b.Fatal(err)
		}
	}
	r := NewReader(&loopReader{data: stream.Bytes()})
	b.SetBytes(int64(f.Size() + PrefixSize))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Next(); err != nil && err != io.EOF {
			b.Fatal(err)
		}
	}
}

// BenchmarkNextSmall decodes small requests arriving back to back (a burst of file operations).
func BenchmarkNextSmall(b *testing.B) {
	benchmarkNext(b, Frame{Type: Request, ID: 7, JSON: []byte(`{"op":"lstat","path":"/tmp/some/file.txt"}`)}, 1000)
}

// BenchmarkNextChunk decodes 512 KiB writeChunk requests (writeFile's pieces).
func BenchmarkNextChunk(b *testing.B) {
	benchmarkNext(b, Frame{Type: Request, ID: 7, JSON: []byte(`{"op":"writeChunk","handle":1}`),
		Payload: make([]byte, 512<<10)}, 4)
}
