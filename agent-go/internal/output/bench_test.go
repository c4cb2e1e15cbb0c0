package output

import (
	"os"
	"testing"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// benchmarkSend queues b.N frames of the given payload size from one producer (waiting for room like command
// output does) and waits until all are written to /dev/null.
func benchmarkSend(b *testing.B, queue proto.Queue, payload int) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devNull.Close()
	w := New(devNull, Config{})
	f := frame.Frame{Type: frame.Event, ID: 3, JSON: []byte(`{"kind":"output","stream":"stdout"}`),
		Payload: make([]byte, payload)}
	b.SetBytes(int64(f.Size() + frame.PrefixSize))
	b.ReportAllocs()
	for b.Loop() {
		if queue == proto.BulkQueue {
			if err := w.WaitForRoom(nil); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Send(queue, f, nil); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
	if err := w.Wait(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSendSmallControl is a burst of small replies (concurrent file operations).
func BenchmarkSendSmallControl(b *testing.B) { benchmarkSend(b, proto.ControlQueue, 100) }

// BenchmarkSendBulkOutput is command output in 64 KiB events.
func BenchmarkSendBulkOutput(b *testing.B) { benchmarkSend(b, proto.BulkQueue, 64<<10) }
