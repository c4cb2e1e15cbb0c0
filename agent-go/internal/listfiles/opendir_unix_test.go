//go:build !windows

package listfiles

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A directory replaced by a FIFO between its parent's read and its own open is skipped (LF15), not waited on:
// opening a FIFO that has no writer would block the walk, and with it the request, its cancel and the agent's
// shutdown, forever.
func TestOpenDirOfAFifoFailsAtOnce(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "was-a-directory")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() {
		f, err := openDir(fifo)
		if err == nil {
			f.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if !errors.Is(err, syscall.ENOTDIR) {
			t.Fatalf("openDir of a FIFO: got %v, want ENOTDIR", err)
		}
	case <-time.After(2 * time.Second):
		// Release the blocked open (a writer arrives) so the goroutine ends before failing.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		<-opened
		t.Fatal("openDir of a FIFO waited for a writer")
	}
}
