package execop

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"github.com/outpost-dev/outpost/agent-go/internal/window"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// event is one emitted output event.
type event struct {
	stream  string
	skipped *window.Skip
	text    string
}

// fakeEvents records events. gate, when set, makes Emit wait until it is closed (a full bulk queue);
// maxPayload, when set, refuses larger payloads as the connection's writer refuses frames over its limit; fail,
// when set, is returned by every Emit.
type fakeEvents struct {
	mu         sync.Mutex
	events     []event
	first      chan struct{}
	once       sync.Once
	gate       chan struct{}
	maxPayload int
	fail       error
	emits      int
}

func newFakeEvents() *fakeEvents { return &fakeEvents{first: make(chan struct{})} }

func (f *fakeEvents) Emit(queue proto.Queue, ev map[string]any, payload []byte) error {
	if queue != proto.BulkQueue {
		return errors.New("output must use the bulk queue")
	}
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	f.emits++
	f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	if f.maxPayload > 0 && len(payload) > f.maxPayload {
		return fmt.Errorf("%w: payload of %d bytes", frame.ErrTooLarge, len(payload))
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	var decoded struct {
		Kind    string       `json:"kind"`
		Stream  string       `json:"stream"`
		Skipped *window.Skip `json:"skipped"`
	}
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return err
	}
	if decoded.Kind != "output" || len(payload) == 0 {
		return errors.New("bad event " + string(raw))
	}
	f.mu.Lock()
	f.events = append(f.events, event{decoded.Stream, decoded.Skipped, string(payload)})
	f.mu.Unlock()
	f.once.Do(func() { close(f.first) })
	return nil
}

func (f *fakeEvents) Unsent() int { return 0 }

func (f *fakeEvents) all() []event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]event(nil), f.events...)
}

// text concatenates the output of one stream.
func (f *fakeEvents) text(stream string) string {
	var b strings.Builder
	for _, e := range f.all() {
		if e.stream == stream {
			b.WriteString(e.text)
		}
	}
	return b.String()
}

// outcome is what Handle returned.
type outcome struct {
	result  map[string]any
	failure *proto.Failure
	elapsed time.Duration
}

func (o outcome) exitCode(t *testing.T) int {
	t.Helper()
	if o.failure != nil {
		t.Fatalf("unexpected failure %s: %s", o.failure.Code, o.failure.Message)
	}
	code, ok := o.result["exitCode"].(int)
	if !ok {
		t.Fatalf("no exitCode in %v", o.result)
	}
	return code
}

func (o outcome) code(t *testing.T) string {
	t.Helper()
	if o.failure == nil {
		t.Fatalf("expected a failure, got result %v", o.result)
	}
	return o.failure.Code
}

// run executes one request synchronously.
func run(t *testing.T, r *Runner, args map[string]any, control *proto.Control, events *fakeEvents) outcome {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	if control == nil {
		control = proto.NewControl()
	}
	if events == nil {
		events = newFakeEvents()
	}
	start := time.Now()
	reply, err := r.Handle(&proto.Call{ID: 1, Op: "exec", Args: raw, Control: control, Events: events})
	out := outcome{elapsed: time.Since(start)}
	if err != nil {
		var failure *proto.Failure
		if !errors.As(err, &failure) {
			t.Fatalf("error is not a *proto.Failure: %v", err)
		}
		out.failure = failure
		return out
	}
	if !reply.Bulk {
		t.Fatal("exec result must go to the bulk queue")
	}
	result, ok := reply.JSON.(map[string]any)
	if !ok {
		t.Fatalf("result is %T", reply.JSON)
	}
	out.result = result
	return out
}

// runAsync starts a request and returns a channel with its outcome.
func runAsync(t *testing.T, r *Runner, args map[string]any, control *proto.Control, events *fakeEvents) <-chan outcome {
	t.Helper()
	done := make(chan outcome, 1)
	go func() { done <- run(t, r, args, control, events) }()
	return done
}

func wait(t *testing.T, done <-chan outcome, limit time.Duration) outcome {
	t.Helper()
	select {
	case o := <-done:
		return o
	case <-time.After(limit):
		t.Fatalf("exec did not settle within %v", limit)
		return outcome{}
	}
}

func waitFirst(t *testing.T, events *fakeEvents) {
	t.Helper()
	select {
	case <-events.first:
	case <-time.After(5 * time.Second):
		t.Fatal("no output event")
	}
}

func shell(command string, cwd string) map[string]any {
	return map[string]any{"command": command, "cwd": cwd, "env": map[string]any{}}
}

func argv(cwd string, args ...string) map[string]any {
	if args == nil {
		args = []string{}
	}
	return map[string]any{"argv": args, "cwd": cwd, "env": map[string]any{}}
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}
