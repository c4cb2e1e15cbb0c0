//go:build unix

package execop

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// counts adds up what the events delivered and what they reported as skipped.
func counts(events *fakeEvents) (delivered, skipped int64) {
	for _, e := range events.all() {
		delivered += int64(len(e.text))
		if e.skipped != nil {
			skipped += e.skipped.Bytes
		}
	}
	return delivered, skipped
}

// TestLargeWindowLosesNothing is issue 8's case: a window larger than a frame (20 MB of 40 MB) used to deliver
// one payload over the frame limit; the emit failed, every later chunk was dropped, and the result still said
// exit 0 (65 KB delivered, nothing counted as skipped).
func TestLargeWindowLosesNothing(t *testing.T) {
	dir := t.TempDir()
	args := shell("head -c 40000000 /dev/zero | tr '\\0' x", dir)
	args["window"] = map[string]any{"maxBytes": 20_000_000, "maxLines": 1e12, "minIntervalMs": 300, "bytesPerSecond": 1e12}
	events := newFakeEvents()
	events.maxPayload = frame.MaxPayload
	out := run(t, New(dir), args, nil, events)
	if code := out.exitCode(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if delivered, skipped := counts(events); delivered+skipped != 40_000_000 || delivered < 20_000_000 {
		t.Fatalf("delivered %d + skipped %d, want 40000000 with at least the window delivered", delivered, skipped)
	}
}

// TestDeliveryFailureFailsTheCommand: an emit failure other than a closed output kills the command and fails it;
// output is never dropped behind a success.
func TestDeliveryFailureFailsTheCommand(t *testing.T) {
	for _, windowed := range []bool{false, true} {
		t.Run(fmt.Sprintf("windowed=%v", windowed), func(t *testing.T) {
			dir := t.TempDir()
			args := shell("yes", dir)
			if windowed {
				args["window"] = map[string]any{"maxBytes": 1000, "maxLines": 10, "minIntervalMs": 0, "bytesPerSecond": 1e12}
			}
			events := newFakeEvents()
			events.fail = errors.New("frame too large")
			out := wait(t, runAsync(t, New(dir), args, nil, events), 10*time.Second)
			if code := out.code(t); code != "unknown" {
				t.Fatalf("code %s", code)
			}
			if out.failure.Message != "Failed to deliver shell output: frame too large" {
				t.Fatalf("message %q", out.failure.Message)
			}
		})
	}
}

// TestClosedOutputIsNoFailure: once the connection's output closed, output stops quietly (the connection is
// ending) and the command runs to its own end.
func TestClosedOutputIsNoFailure(t *testing.T) {
	dir := t.TempDir()
	events := newFakeEvents()
	events.fail = fmt.Errorf("%w: write frame: broken pipe", proto.ErrOutputClosed)
	out := run(t, New(dir), shell("head -c 1000000 /dev/zero", dir), nil, events)
	if code := out.exitCode(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if events.emits != 1 {
		t.Fatalf("%d emits after the output closed, want only the first", events.emits)
	}
}

// TestFullWindowPausesTheCommand is backpressure with a window: while the connection takes nothing, a window
// whose text cannot be omitted stops reading once maxHeld bytes are undelivered, so the command waits as it
// would behind a full bulk queue; everything arrives once the connection moves. Before, the window took all
// output at once (1.0 GB of memory for 300 MB of output).
func TestFullWindowPausesTheCommand(t *testing.T) {
	saved := maxHeld
	maxHeld = 1 << 20
	defer func() { maxHeld = saved }()
	dir := t.TempDir()
	marker := filepath.Join(dir, "finished")
	args := shell("head -c 8388608 /dev/zero; touch finished", dir)
	args["window"] = map[string]any{"maxBytes": 1e12, "maxLines": 1e12, "minIntervalMs": 0, "bytesPerSecond": 1e12}
	events := newFakeEvents()
	events.gate = make(chan struct{})
	done := runAsync(t, New(dir), args, nil, events)
	time.Sleep(time.Second)
	_, err := os.Stat(marker)
	finishedEarly := err == nil
	close(events.gate)
	out := wait(t, done, 10*time.Second)
	if finishedEarly {
		t.Fatal("the command finished while the connection took nothing")
	}
	if code := out.exitCode(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if delivered, skipped := counts(events); skipped != 0 || delivered != 8388608 {
		t.Fatalf("delivered %d, skipped %d", delivered, skipped)
	}
}
