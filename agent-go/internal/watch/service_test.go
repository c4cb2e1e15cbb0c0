package watch

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/frame"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"github.com/outpost-dev/outpost/agent-go/internal/server"
	"github.com/outpost-dev/outpost/agent-go/internal/sysinfo"
)

// conn is a protocol client over a server running the watch service, as the agent does.
type conn struct {
	t       *testing.T
	in      *io.PipeWriter
	frames  chan frame.Frame
	served  chan error
	service *Service
	once    sync.Once
}

func serve(t *testing.T) *conn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	service := New()
	info := sysinfo.Current()
	c := &conn{t: t, in: inW, frames: make(chan frame.Frame, 1024), served: make(chan error, 1), service: service}
	go func() {
		err := server.Serve(inR, outW, server.Config{Token: "ab", Info: &info,
			Dedicated: map[string]proto.Handler{"watch": service.Handle}})
		service.CloseAll()
		outW.Close()
		c.served <- err
	}()
	go func() {
		defer close(c.frames)
		br := bufio.NewReader(outR)
		if _, err := br.ReadString('\n'); err != nil {
			return
		}
		frames := frame.NewReader(br)
		for {
			f, err := frames.Next()
			if err != nil {
				io.Copy(io.Discard, outR)
				return
			}
			c.frames <- f
		}
	}()
	t.Cleanup(c.close)
	return c
}

func (c *conn) send(typ frame.Type, id uint32, fields map[string]any) {
	c.t.Helper()
	raw, _ := json.Marshal(fields)
	if err := frame.Write(c.in, frame.Frame{Type: typ, ID: id, JSON: raw}); err != nil {
		c.t.Fatal(err)
	}
}

// next returns the next frame (pings skipped), failing after the bounded wait.
func (c *conn) next() (frame.Frame, map[string]any) {
	c.t.Helper()
	deadline := time.After(3 * wait)
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				c.t.Fatal("the connection ended")
			}
			if f.Type == frame.Ping {
				continue
			}
			var fields map[string]any
			if err := json.Unmarshal(f.JSON, &fields); err != nil {
				c.t.Fatal(err)
			}
			return f, fields
		case <-deadline:
			c.t.Fatal("no frame in time")
		}
	}
}

func (c *conn) close() {
	c.once.Do(func() {
		c.in.Close()
		select {
		case <-c.served:
		case <-time.After(10 * time.Second):
			c.t.Error("the server did not stop")
		}
	})
}

func watchRequest(paths []string, extra map[string]any) map[string]any {
	targets := []any{}
	for _, p := range paths {
		targets = append(targets, map[string]any{"path": p, "recursive": true, "exclude": map[string]any{"hidden": false, "names": []any{}}})
	}
	fields := map[string]any{"op": "watch", "targets": targets}
	for k, v := range extra {
		fields[k] = v
	}
	return fields
}

func TestWatchOpReadyChangesAndCancel(t *testing.T) {
	dir := tempDir(t)
	c := serve(t)
	c.send(frame.Request, 7, watchRequest([]string{dir}, map[string]any{"mode": "native"}))
	f, ev := c.next()
	if f.Type != frame.Event || f.ID != 7 || ev["kind"] != "ready" || ev["mode"] != "native" {
		t.Fatalf("first frame %v %v, want the ready event", f.Type, ev)
	}
	write(t, filepath.Join(dir, "new.txt"), "x")
	f, ev = c.next()
	if f.Type != frame.Event || ev["kind"] != "change" || fmt.Sprint(ev["paths"]) != fmt.Sprint([]any{filepath.Join(dir, "new.txt")}) {
		t.Fatalf("change %v %v", f.Type, ev)
	}
	c.send(frame.Cancel, 7, map[string]any{})
	f, ev = c.next()
	if f.Type != frame.Result || f.ID != 7 || len(ev) != 0 {
		t.Fatalf("after cancel %v %v, want the result {}", f.Type, ev)
	}
}

func TestWatchOpRefusals(t *testing.T) {
	dir := tempDir(t)
	c := serve(t)
	for i, fields := range []map[string]any{
		{"op": "watch"},
		{"op": "watch", "targets": []any{map[string]any{"recursive": true}}},
		{"op": "watch", "targets": []any{map[string]any{"path": 5}}},
	} {
		c.send(frame.Request, uint32(i+1), fields)
		f, ev := c.next()
		if f.Type != frame.Error || ev["code"] != "EINVAL" || ev["message"] != "watch needs targets" {
			t.Errorf("request %v: %v %v", fields, f.Type, ev)
		}
	}
	c.send(frame.Request, 9, watchRequest([]string{dir}, map[string]any{"maxDirectories": 0}))
	f, ev := c.next()
	if f.Type != frame.Error || ev["code"] != "EINVAL" || ev["message"] != "Watched paths exceed 0 directories" {
		t.Errorf("budget 0: %v %v", f.Type, ev)
	}
}

// A change set too large for one frame arrives as an overflow; the connection and the watcher keep working.
func TestOversizedChangeBecomesAnOverflow(t *testing.T) {
	dir := tempDir(t)
	watched := filepath.Join(dir, "watched")
	staging := filepath.Join(dir, "staging", "tree")
	if err := os.MkdirAll(watched, 0o755); err != nil {
		t.Fatal(err)
	}
	// Control characters are escaped as \u0001 in JSON (six bytes each): ten nested directories with names of
	// 250 of them give every file a 15 KB path entry, and 1,200 files make a change of 18 MB.
	deep := staging
	for range 10 {
		deep = filepath.Join(deep, strings.Repeat("\x01", 250))
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 1_200 {
		if err := os.WriteFile(filepath.Join(deep, fmt.Sprint(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := serve(t)
	c.send(frame.Request, 3, watchRequest([]string{watched}, map[string]any{"mode": "polling", "pollIntervalMs": 200}))
	if _, ev := c.next(); ev["kind"] != "ready" {
		t.Fatalf("want ready, got %v", ev)
	}
	if err := os.Rename(staging, filepath.Join(watched, "tree")); err != nil {
		t.Fatal(err)
	}
	f, ev := c.next()
	if f.Type != frame.Event || ev["kind"] != "change" || ev["overflow"] != true || ev["mode"] != nil {
		t.Fatalf("want an overflow change without mode, got %v %v", f.Type, ev)
	}
	write(t, filepath.Join(watched, "followup.txt"), "x")
	f, ev = c.next()
	// Files that age past the hashing window (5 s) may be reported again alongside, as in Node.
	paths, _ := ev["paths"].([]any)
	if f.Type != frame.Event || !slices.Contains(paths, any(filepath.Join(watched, "followup.txt"))) {
		t.Fatalf("after the overflow: %v %.300v", f.Type, ev)
	}
}

// Opening a watcher on 10,000 directories happens on its own goroutine: a request sent after the watch is
// answered while the scan still runs, before the watch is ready.
func TestLargeTreeDoesNotHoldUpOtherRequests(t *testing.T) {
	dir := tempDir(t)
	for i := range 100 {
		for j := range 98 {
			if err := os.MkdirAll(filepath.Join(dir, fmt.Sprint(i), fmt.Sprint(j)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := serve(t)
	c.send(frame.Request, 1, watchRequest([]string{dir}, map[string]any{"mode": "native"}))
	c.send(frame.Request, 2, map[string]any{"op": "hello", "protocol": 1})
	f, _ := c.next()
	if f.ID != 2 || f.Type != frame.Result {
		t.Fatalf("first frame is %v of request %d, want hello's result before the watch is ready", f.Type, f.ID)
	}
	f, ev := c.next()
	if f.ID != 1 || ev["kind"] != "ready" {
		t.Fatalf("then %v %v, want ready", f.Type, ev)
	}
	// Idle, the watcher needs no work: hello still answers at once.
	c.send(frame.Request, 3, map[string]any{"op": "hello", "protocol": 1})
	if f, _ := c.next(); f.ID != 3 {
		t.Fatalf("got frame of %d", f.ID)
	}
}

// When the connection ends every watcher stops (the server's owner closes the service).
func TestEndOfConnectionStopsWatchers(t *testing.T) {
	dir := tempDir(t)
	c := serve(t)
	c.send(frame.Request, 1, watchRequest([]string{dir}, map[string]any{"mode": "polling", "pollIntervalMs": 50}))
	if _, ev := c.next(); ev["kind"] != "ready" {
		t.Fatalf("want ready, got %v", ev)
	}
	c.close()
	// goleak (TestMain) checks that no watcher goroutine outlived the connection.
}
