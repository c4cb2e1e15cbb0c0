//go:build !windows

package watch

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// finishesAtOnce runs call and fails the test if it has not returned within 2 s; a call stuck opening a FIFO is
// released by a writer first, so no goroutine outlives the test.
func finishesAtOnce(t *testing.T, fifo, what string, call func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		call()
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		<-done
		t.Errorf("%s waited for a writer", what)
	}
}

func makeFifo(t *testing.T) string {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	return fifo
}

// A scan meets a FIFO where it saw a directory or a regular file a moment before (replaced meanwhile): it must
// go on, as Node's scandir fails ENOTDIR, instead of waiting for a writer forever, with the watcher's loop, its
// Close and the connection's shutdown stuck behind it.
func TestScanDoesNotWaitOnAFifoThatReplacedAnEntry(t *testing.T) {
	fifo := makeFifo(t)
	finishesAtOnce(t, fifo, "listing a FIFO as a directory", func() {
		if _, err := readDirNames(fifo); !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("readDirNames of a FIFO: got %v, want ENOTDIR", err)
		}
	})
	finishesAtOnce(t, fifo, "hashing a FIFO as a file", func() {
		if hash, ok := hashFile(fifo); ok {
			t.Errorf("hashFile of a FIFO: got hash %q, want none", hash)
		}
	})
}
