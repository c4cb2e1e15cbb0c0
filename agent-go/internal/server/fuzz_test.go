package server

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
)

// lockedBuffer collects the server's output; the writer goroutine and the test touch it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// FuzzDispatch feeds random bytes, after a valid hello, into a server with fake handlers: it must never panic
// or hang, and whatever it writes must be the sync line followed by well-formed frames.
func FuzzDispatch(f *testing.F) {
	enc := func(frames ...frame.Frame) []byte {
		var b []byte
		for _, fr := range frames {
			raw, err := frame.Encode(fr)
			if err != nil {
				f.Fatal(err)
			}
			b = append(b, raw...)
		}
		return b
	}
	req := func(id uint32, json string, payload string) frame.Frame {
		return frame.Frame{Type: frame.Request, ID: id, JSON: []byte(json), Payload: []byte(payload)}
	}
	prefix := enc(req(1, `{"protocol":1,"op":"hello"}`, ""))
	f.Add(enc(req(2, `{"op":"echo","a":[1,{"b":null}]}`, "payload")))
	f.Add(enc(req(3, `{"op":"exec","wait":true}`, ""), frame.Frame{Type: frame.Cancel, ID: 3, JSON: []byte(`{"mode":"kill"}`)}))
	f.Add(enc(req(4, `{"op":"exec","events":3}`, ""), frame.Frame{Type: frame.Cancel, ID: 4, JSON: []byte(`{}`)}))
	f.Add(enc(req(5, `{"op":"writeChunk","handle":1}`, "abc"), req(6, `{"op":"writeChunk","handle":1}`, "def")))
	f.Add(enc(req(7, `{"op":"panic"}`, ""), req(8, `{"op":"big"}`, ""), req(9, `{"op":"fail"}`, "")))
	f.Add(enc(req(10, `{"op":`, ""), req(11, `[]`, ""), req(12, `{"op":7}`, ""), req(13, "", "")))
	f.Add(enc(frame.Frame{Type: frame.Ping, JSON: []byte(`{}`)}, frame.Frame{Type: 9, ID: 1, JSON: []byte(`x`)}))
	f.Add([]byte{0, 0, 0, 5, 1, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})

	f.Fuzz(func(t *testing.T, data []byte) {
		files, commands := newFakeFiles(), newFakeCommands()
		close(files.release) // "block" must not wait here
		info := testInfo
		var out lockedBuffer
		served := make(chan error, 1)
		go func() {
			served <- Serve(bytes.NewReader(append(bytes.Clone(prefix), data...)), &out, Config{
				Token: "f00d", Files: files, Commands: commands, Info: &info, Log: io.Discard,
				ExitGrace: 5 * time.Second,
			})
		}()
		var err error
		select {
		case err = <-served:
		case <-time.After(10 * time.Second):
			t.Fatal("Serve hung")
		}
		if err != nil && !errors.Is(err, frame.ErrFraming) {
			t.Fatalf("Serve: %v", err)
		}
		written := out.bytes()
		rest, ok := bytes.CutPrefix(written, []byte("PI-ENV f00d\n"))
		if !ok {
			t.Fatalf("output does not start with the sync line: %q", written)
		}
		r := frame.NewReader(bytes.NewReader(rest))
		for {
			fr, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("the server wrote a malformed frame: %v", err)
			}
			if fr.Type < frame.Result || fr.Type > frame.Ping {
				t.Fatalf("the server wrote frame type %d", fr.Type)
			}
		}
	})
}
