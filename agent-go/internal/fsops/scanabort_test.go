//go:build unix

package fsops

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// A cancel that arrives while scanLines is reading a large file stops it at the next read: code "aborted",
// after one read instead of the whole file. The same handle then scans to the end when nobody cancels.
func TestScanLinesAbortedMidway(t *testing.T) {
	const size = 4 << 20 // 64 reads of scanChunk
	path := filepath.Join(t.TempDir(), "big.txt")
	line := []byte("a line of text that is not too short\n")
	data := bytes.Repeat(line, size/len(line)+1)[:size]
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ops := New()
	defer ops.CloseAll()
	id := run(t, ops, "open", map[string]any{"path": path}, nil).handle(t)
	raw, _ := json.Marshal(map[string]any{"handle": id, "startLine": 0})

	control := proto.NewControl()
	reads := 0
	ops.afterScanRead = func(int) {
		reads++
		if reads == 1 {
			// The cancel frame arrives on the server's reader goroutine while the scan runs.
			flipped := make(chan struct{})
			go func() {
				control.Abort()
				close(flipped)
			}()
			<-flipped
		}
	}
	runRaw(t, ops, "scanLines", raw, nil, control).expectFailure(t, "aborted", "", "", "aborted")
	if reads != 1 {
		t.Fatalf("the scan made %d reads after the cancel arrived during the first, want it to stop there", reads)
	}

	reads = 0
	got := runRaw(t, ops, "scanLines", raw, nil, proto.NewControl()).must(t).json
	if want := size/scanChunk + 1; reads != want {
		t.Fatalf("an uncancelled scan made %d reads, want %d (the file spans many reads)", reads, want)
	}
	if newlines := float64(bytes.Count(data, []byte("\n"))); got["newlines"] != newlines || got["end"] != float64(size) {
		t.Fatalf("scan result %v, want %v newlines and end %d", got, newlines, size)
	}
}
