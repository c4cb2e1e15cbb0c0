package watch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every expectation: generous for a loaded machine, short next to a test timeout.
const wait = 3 * time.Second

// recorder collects a watcher's deliveries.
type recorder struct {
	mu      sync.Mutex
	changes []Change
	arrived chan struct{}
}

func newRecorder() *recorder { return &recorder{arrived: make(chan struct{}, 1024)} }

func (r *recorder) deliver(c Change) {
	r.mu.Lock()
	r.changes = append(r.changes, c)
	r.mu.Unlock()
	r.arrived <- struct{}{}
}

func (r *recorder) all() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.changes)
}

// covered reports whether some delivery covers path: an overflow, or a reported path at or above it.
func covered(changes []Change, path string) bool {
	for _, c := range changes {
		if c.Overflow {
			return true
		}
		for _, p := range c.Paths {
			if within(path, p) {
				return true
			}
		}
	}
	return false
}

// expect waits until a delivery matching ok arrives, and fails the test after the bounded wait.
func (r *recorder) expect(t *testing.T, what string, ok func([]Change) bool) {
	t.Helper()
	deadline := time.After(wait)
	for !ok(r.all()) {
		select {
		case <-r.arrived:
		case <-deadline:
			t.Fatalf("no change %s within %v; got %+v", what, wait, r.all())
		}
	}
}

// expectCovered waits for a delivery that covers path.
func (r *recorder) expectCovered(t *testing.T, path string) {
	t.Helper()
	r.expect(t, "covering "+path, func(c []Change) bool { return covered(c, path) })
}

// reset forgets what was delivered so far.
func (r *recorder) reset() {
	r.mu.Lock()
	r.changes = nil
	r.mu.Unlock()
}

// quiet waits for d and fails if anything was delivered meanwhile.
func (r *recorder) quiet(t *testing.T, d time.Duration, what string) {
	t.Helper()
	select {
	case <-r.arrived:
		t.Fatalf("%s: unexpected change %+v", what, r.all())
	case <-time.After(d):
	}
}

// modes runs a test in native mode and in 100 ms polling.
func modes(t *testing.T, run func(t *testing.T, opts Options)) {
	t.Run("native", func(t *testing.T) {
		run(t, Options{Mode: ModeNative, PollInterval: DefaultPollInterval, MaxDirectories: DefaultMaxDirectories})
	})
	t.Run("polling", func(t *testing.T) {
		run(t, Options{Mode: ModePolling, PollInterval: 100 * time.Millisecond, MaxDirectories: DefaultMaxDirectories})
	})
}

// open starts a watcher closed at the end of the test.
func open(t *testing.T, opts Options, targets ...target) (*Watcher, *recorder) {
	t.Helper()
	rec := newRecorder()
	w, err := openWatcher(targets, opts, rec.deliver, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(w.Close)
	return w, rec
}

func dirTarget(path string, recursive bool) target {
	return target{path: path, recursive: recursive, names: map[string]bool{}}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tempDir is a fresh directory with symbolic links resolved (so event paths and targets agree).
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func hasPathUnder(changes []Change, base string) string {
	for _, c := range changes {
		for _, p := range c.Paths {
			if within(p, base) {
				return p
			}
		}
	}
	return ""
}

func joinAll(parts ...string) string { return strings.Join(parts, string(os.PathSeparator)) }
