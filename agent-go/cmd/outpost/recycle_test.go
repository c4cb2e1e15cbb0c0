package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
)

// chunkPattern is the content of chunk i of file f: every byte tells which chunk and file it belongs to, so a
// buffer reused while a write or a reply still needed it shows up as another chunk's bytes.
func chunkPattern(f, i, size int) []byte {
	b := make([]byte, size)
	for j := range b {
		b[j] = byte(f*37 + i*11 + j%7)
	}
	return b
}

// TestRecycledBuffersKeepEveryChunk: the agent reuses the memory of writeChunk frames and of pread replies.
// Two files written in interleaved 512 KiB chunks, all sent before any answer is read, and then read back with
// every pread in flight at once, must hold exactly what was sent.
func TestRecycledBuffersKeepEveryChunk(t *testing.T) {
	a := startAgent(t)
	stop := a.pingWhile()
	defer stop()
	dir := t.TempDir()
	const chunk, chunks = 512 << 10, 12
	paths := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	handles := make([]float64, len(paths))
	for f, path := range paths {
		a.request(uint32(1+f), fmt.Sprintf(`{"op":"write","path":%q,"append":false,"keep":true}`, path), chunkPattern(f, 0, chunk))
		handles[f] = a.reply(uint32(1 + f))["handle"].(float64)
	}
	id := uint32(10)
	for i := 1; i < chunks; i++ {
		for f := range paths {
			a.request(id, fmt.Sprintf(`{"op":"writeChunk","handle":%d}`, int(handles[f])), chunkPattern(f, i, chunk))
			id++
		}
	}
	a.replies(int(id - 10))
	for f, path := range paths {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range chunks {
			if !bytes.Equal(got[i*chunk:(i+1)*chunk], chunkPattern(f, i, chunk)) {
				t.Fatalf("%s: chunk %d holds other bytes", path, i)
			}
		}
	}
	// Read back: every pread of both files in flight, answers checked as they come.
	for f, path := range paths {
		a.request(uint32(50+f), fmt.Sprintf(`{"op":"open","path":%q}`, path), nil)
		handles[f] = a.reply(uint32(50 + f))["handle"].(float64)
	}
	want := map[uint32][]byte{}
	id = 100
	for i := range chunks {
		for f := range paths {
			a.request(id, fmt.Sprintf(`{"op":"pread","handle":%d,"offset":%d,"length":%d}`, int(handles[f]), i*chunk, chunk), nil)
			want[id] = chunkPattern(f, i, chunk)
			id++
		}
	}
	for len(want) > 0 {
		r, err := a.next()
		if err != nil {
			t.Fatal(err)
		}
		expected, ok := want[r.ID]
		if !ok || r.Type != frame.Result {
			t.Fatalf("unexpected frame %d type %d: %s", r.ID, r.Type, r.JSON)
		}
		if !bytes.Equal(r.Payload, expected) {
			t.Fatalf("pread %d returned other bytes", r.ID)
		}
		delete(want, r.ID)
	}
}
