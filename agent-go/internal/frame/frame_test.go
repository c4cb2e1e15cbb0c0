package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// raw builds a frame's bytes by hand, with an arbitrary length field, so tests can break every rule.
func raw(length uint32, typ Type, id, jsonLength uint32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, length)
	b = append(b, byte(typ))
	b = binary.BigEndian.AppendUint32(b, id)
	b = binary.BigEndian.AppendUint32(b, jsonLength)
	return append(b, body...)
}

func TestRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte{0xAB}, MaxFrame-HeaderSize-len(`{"a":1}`))
	cases := []struct {
		name string
		in   Frame
	}{
		{"request", Frame{Type: Request, ID: 1, JSON: []byte(`{"op":"hello","protocol":1}`)}},
		{"with payload", Frame{Type: Result, ID: 0xFFFFFFFF, JSON: []byte(`{}`), Payload: []byte("hello\x00world")}},
		{"ping", Frame{Type: Ping, ID: 0, JSON: []byte(`{}`)}},
		{"largest frame", Frame{Type: Event, ID: 7, JSON: []byte(`{"a":1}`), Payload: big}},
		{"unknown type", Frame{Type: 200, ID: 3, JSON: []byte(`{"x":[1,2]}`), Payload: []byte{1}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, tc.in); err != nil {
				t.Fatalf("Write: %v", err)
			}
			encoded, err := Encode(tc.in)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if !bytes.Equal(encoded, buf.Bytes()) {
				t.Fatalf("Encode and Write differ")
			}
			if got := binary.BigEndian.Uint32(encoded); int(got) != tc.in.Size() || len(encoded) != tc.in.Size()+4 {
				t.Fatalf("length field %d, frame size %d, encoded %d bytes", got, tc.in.Size(), len(encoded))
			}
			r := NewReader(&buf)
			got, err := r.Next()
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if got.Type != tc.in.Type || got.ID != tc.in.ID || !bytes.Equal(got.JSON, tc.in.JSON) ||
				!bytes.Equal(got.Payload, tc.in.Payload) {
				t.Fatalf("decoded %v/%d/%q/%d bytes, want %v/%d/%q/%d bytes", got.Type, got.ID, got.JSON,
					len(got.Payload), tc.in.Type, tc.in.ID, tc.in.JSON, len(tc.in.Payload))
			}
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("after the last frame: %v, want io.EOF", err)
			}
		})
	}
}

func TestDecodeLimits(t *testing.T) {
	cases := []struct {
		name     string
		input    []byte
		wantErr  error // nil: a frame decodes
		wantJSON string
		wantPay  string
	}{
		{"empty input is a clean end", nil, io.EOF, "", ""},
		{"length 0", raw(0, Request, 1, 0, nil), ErrFraming, "", ""},
		{"length 8", raw(8, Request, 1, 0, nil), ErrFraming, "", ""},
		{"length 9, no JSON", raw(9, Request, 1, 0, nil), nil, "{}", ""},
		{"length over 16 MiB", raw(MaxFrame+1, Request, 1, 0, nil), ErrFraming, "", ""},
		{"length 0xFFFFFFFF", raw(0xFFFFFFFF, Request, 1, 0, nil), ErrFraming, "", ""},
		{"jsonLength past the frame", raw(9+2, Request, 1, 3, []byte("{}")), ErrFraming, "", ""},
		{"jsonLength huge", raw(9+2, Request, 1, 0xFFFFFFFF, []byte("{}")), ErrFraming, "", ""},
		{"jsonLength fills the frame", raw(9+2, Request, 1, 2, []byte("{}")), nil, "{}", ""},
		{"jsonLength 0 with payload", raw(9+3, Request, 1, 0, []byte("abc")), nil, "{}", "abc"},
		{"unparsable JSON is not a framing error", raw(9+3, Request, 1, 3, []byte("{x}")), nil, "{x}", ""},
		{"truncated length prefix", []byte{0, 0}, io.ErrUnexpectedEOF, "", ""},
		{"truncated header", raw(20, Request, 1, 2, nil)[:8], io.ErrUnexpectedEOF, "", ""},
		{"truncated body", raw(9+10, Request, 1, 2, []byte("{}ab")), io.ErrUnexpectedEOF, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewReader(bytes.NewReader(tc.input)).Next()
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				if tc.wantErr == io.EOF && err != io.EOF {
					t.Fatalf("a clean end must be io.EOF itself, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if string(got.JSON) != tc.wantJSON || string(got.Payload) != tc.wantPay {
				t.Fatalf("JSON %q payload %q, want %q %q", got.JSON, got.Payload, tc.wantJSON, tc.wantPay)
			}
		})
	}
}

func TestWriteRejectsOversizedFrame(t *testing.T) {
	cases := []struct {
		name        string
		json, bytes int
		wantErr     bool
	}{
		{"exactly the limit", 2, MaxFrame - HeaderSize - 2, false},
		{"one byte over", 2, MaxFrame - HeaderSize - 1, true},
		{"JSON alone over", MaxFrame, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := Frame{Type: Result, ID: 1, JSON: make([]byte, tc.json), Payload: make([]byte, tc.bytes)}
			var buf bytes.Buffer
			err := Write(&buf, f)
			if tc.wantErr {
				if !errors.Is(err, ErrTooLarge) || buf.Len() != 0 {
					t.Fatalf("Write: %v, %d bytes written; want ErrTooLarge and nothing written", err, buf.Len())
				}
				if _, err := Encode(f); !errors.Is(err, ErrTooLarge) {
					t.Fatalf("Encode: %v, want ErrTooLarge", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
		})
	}
}

func TestSequenceAndSlowReader(t *testing.T) {
	var stream bytes.Buffer
	want := []Frame{
		{Type: Request, ID: 1, JSON: []byte(`{"op":"a"}`)},
		{Type: Cancel, ID: 1, JSON: []byte(`{"mode":"kill"}`)},
		{Type: Request, ID: 2, JSON: []byte(`{"op":"b"}`), Payload: []byte(strings.Repeat("x", 100000))},
	}
	for _, f := range want {
		if err := Write(&stream, f); err != nil {
			t.Fatal(err)
		}
	}
	// One byte per Read: the decoder must reassemble frames from arbitrarily small pieces.
	r := NewReader(oneByteReader{&stream})
	for i, w := range want {
		got, err := r.Next()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if got.Type != w.Type || got.ID != w.ID || !bytes.Equal(got.JSON, w.JSON) || !bytes.Equal(got.Payload, w.Payload) {
			t.Fatalf("frame %d differs", i)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func FuzzFrameDecoder(f *testing.F) {
	seed := func(frames ...Frame) []byte {
		var b bytes.Buffer
		for _, fr := range frames {
			_ = Write(&b, fr)
		}
		return b.Bytes()
	}
	f.Add(seed(Frame{Type: Request, ID: 1, JSON: []byte(`{"op":"hello"}`)}))
	f.Add(seed(Frame{Type: Request, ID: 2, JSON: []byte(`{"op":"write"}`), Payload: []byte("data")},
		Frame{Type: Cancel, ID: 2, JSON: []byte(`{}`)}))
	f.Add(raw(9, Ping, 0, 0, nil))
	f.Add(raw(8, Request, 1, 0, nil))
	f.Add(raw(9+2, Request, 1, 5, []byte("{}")))
	f.Add(raw(MaxFrame+1, Request, 1, 0, nil))
	f.Add([]byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		consumed := 0
		for {
			fr, err := r.Next()
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrFraming) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				if err == io.EOF && consumed != len(data) {
					t.Fatalf("clean EOF after %d of %d bytes", consumed, len(data))
				}
				return
			}
			size := int(binary.BigEndian.Uint32(data[consumed:]))
			if size < HeaderSize || size > MaxFrame {
				t.Fatalf("decoded a frame whose length field is %d", size)
			}
			// A jsonLength of 0 decodes as the two bytes {}; otherwise the parts add up to the length field.
			if fr.Size() != size && (fr.Size() != size+2 || string(fr.JSON) != "{}") {
				t.Fatalf("parts add up to %d, length field %d", fr.Size(), size)
			}
			// Re-encoding a decoded frame must give a frame that decodes to the same thing.
			again, err := NewReader(bytes.NewReader(seed(fr))).Next()
			if err != nil || again.Type != fr.Type || again.ID != fr.ID || !bytes.Equal(again.JSON, fr.JSON) ||
				!bytes.Equal(again.Payload, fr.Payload) {
				t.Fatalf("re-encoded frame does not round-trip: %v", err)
			}
			consumed += 4 + size
		}
	})
}

// A frame without JSON is written with jsonLength 0 and read back as {} (killed mutant: Header refusing a
// jsonLength of 0).
func TestEmptyJSONRoundTrip(t *testing.T) {
	var stream bytes.Buffer
	if err := Write(&stream, Frame{Type: Ping}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if got := binary.BigEndian.Uint32(stream.Bytes()[PrefixSize+5:]); got != 0 {
		t.Fatalf("jsonLength %d; want 0", got)
	}
	got, err := NewReader(&stream).Next()
	if err != nil || got.Type != Ping || string(got.JSON) != "{}" || len(got.Payload) != 0 {
		t.Fatalf("read back %+v, %v", got, err)
	}
}

// A source that returns its last bytes together with io.EOF (as many do) still yields its last frame whole,
// then io.EOF (killed mutant: fill taking exactly the bytes it needs, with an error, for too few).
func TestLastBytesArriveWithEOF(t *testing.T) {
	var stream bytes.Buffer
	want := []Frame{
		{Type: Request, ID: 1, JSON: []byte(`{"op":"a"}`)},
		{Type: Request, ID: 2, JSON: []byte(`{"op":"b"}`), Payload: []byte("payload")},
	}
	for _, f := range want {
		if err := Write(&stream, f); err != nil {
			t.Fatal(err)
		}
	}
	r := NewReader(iotest.DataErrReader(oneByteReader{&stream}))
	for i, w := range want {
		got, err := r.Next()
		if err != nil || got.ID != w.ID || !bytes.Equal(got.Payload, w.Payload) {
			t.Fatalf("frame %d: %+v, %v", i, got, err)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("end: %v; want io.EOF", err)
	}
}

// countingEmptyReader returns neither bytes nor an error, and counts how often it was asked.
type countingEmptyReader struct{ reads *int }

func (c countingEmptyReader) Read([]byte) (int, error) {
	*c.reads++
	return 0, nil
}

// A source that never makes progress fails with io.ErrNoProgress after maxEmptyReads reads, as bufio does, instead
// of spinning (killed mutants: the empty-read count reset by empty reads, or one read too many).
func TestReaderWithoutProgress(t *testing.T) {
	reads := 0
	_, err := NewReader(countingEmptyReader{&reads}).Next()
	if !errors.Is(err, io.ErrNoProgress) || reads != maxEmptyReads {
		t.Fatalf("after %d reads: %v; want io.ErrNoProgress after %d", reads, err, maxEmptyReads)
	}
}
