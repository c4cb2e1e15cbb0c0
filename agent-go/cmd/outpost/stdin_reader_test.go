package main

import (
	"bytes"
	"runtime"
	"sync/atomic"
	"testing"
)

// With one P, goroutines made ready just before a read must run before that read: the reader would otherwise
// block in the read while holding the only P, and a pool worker with a reply to write (which hands it to the
// output writer: two goroutines in a row) wait for the runtime to take the P back.
func TestYieldingReaderRunsReadyGoroutinesFirst(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for i := range 10000 {
		var replied atomic.Bool
		handed := make(chan struct{})
		go func() {
			<-handed
			replied.Store(true)
		}()
		go close(handed)
		r := yieldingReader{in: bytes.NewReader([]byte("x"))}
		if _, err := r.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		if !replied.Load() {
			t.Fatalf("read %d ran before the goroutines that were ready", i)
		}
	}
}
