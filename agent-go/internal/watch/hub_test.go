package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fsnotify/fsnotify"
	"github.com/outpost-dev/outpost/agent-go/internal/frame"
)

// inotifyInstances counts this process's inotify descriptors.
func inotifyInstances(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// More watchers than the kernel's default limit of inotify instances (128 per user) all watch natively: the
// watchers of a connection share one instance, as Node's share one per process.
func TestWatchersOfAConnectionShareOneInotifyInstance(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify is Linux's")
	}
	dir := tempDir(t)
	before := inotifyInstances(t)
	c := serve(t)
	const watchers = 200
	for i := range watchers {
		sub := filepath.Join(dir, fmt.Sprint(i))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		c.send(frame.Request, uint32(i+1), watchRequest([]string{sub}, map[string]any{"mode": "native"}))
		for {
			// Events of the shared parent queued before a watcher opened may reach it (spurious, as in Node,
			// whose watchers share one instance too).
			f, ev := c.next()
			if ev["kind"] == "change" {
				continue
			}
			if f.ID != uint32(i+1) || ev["kind"] != "ready" || ev["mode"] != "native" {
				t.Fatalf("watcher %d: %v %v", i, f.Type, ev)
			}
			break
		}
	}
	if got := inotifyInstances(t) - before; got != 1 {
		t.Errorf("%d inotify instances for %d watchers, want 1", got, watchers)
	}
	file := filepath.Join(dir, fmt.Sprint(watchers-1), "x.txt")
	write(t, file, "x")
	for {
		f, ev := c.next()
		if paths, _ := ev["paths"].([]any); f.ID == watchers && slices.Contains(paths, any(file)) {
			break
		}
	}
}

// Two watchers of one path: closing one leaves the other watching (the path's kernel watch is shared).
func TestClosingOneOfTwoWatchersOfAPathKeepsTheOther(t *testing.T) {
	dir := tempDir(t)
	hub := NewHub()
	defer hub.Close()
	opts := Options{Mode: ModeNative, MaxDirectories: 10, Hub: hub}
	first, _ := open(t, opts, dirTarget(dir, false))
	_, rec := open(t, opts, dirTarget(dir, false))
	first.Close()
	write(t, filepath.Join(dir, "x.txt"), "x")
	rec.expectCovered(t, filepath.Join(dir, "x.txt"))
}

// A directory replaced at a path two watchers share is watched again for both.
func TestSharedPathFollowsAReplacedDirectory(t *testing.T) {
	dir := tempDir(t)
	hub := NewHub()
	defer hub.Close()
	opts := Options{Mode: ModeNative, MaxDirectories: 10, Hub: hub}
	target := filepath.Join(dir, "d")
	write(t, filepath.Join(target, "a.txt"), "a")
	_, one := open(t, opts, dirTarget(target, false))
	_, two := open(t, opts, dirTarget(target, false))
	if err := os.RemoveAll(target); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	one.expectCovered(t, filepath.Join(target, "a.txt"))
	two.expectCovered(t, filepath.Join(target, "a.txt"))
	one.reset()
	two.reset()
	write(t, filepath.Join(target, "b.txt"), "b")
	one.expectCovered(t, filepath.Join(target, "b.txt"))
	two.expectCovered(t, filepath.Join(target, "b.txt"))
}

// Events queued while a watcher is busy (a long scan) cost memory per path, not per event: a file rewritten a
// million times during one scan must not queue a million events. The kinds seen for a path are kept together,
// since a removal of a watched path matters to the watcher.
func TestSubscriberQueuesOneEventPerPath(t *testing.T) {
	sub := newSubscriber()
	for range 100_000 {
		sub.push(fsnotify.Event{Name: "/w/log.txt", Op: fsnotify.Write}, false)
	}
	sub.push(fsnotify.Event{Name: "/w/sub", Op: fsnotify.Create}, false)
	sub.push(fsnotify.Event{Name: "/w/sub", Op: fsnotify.Remove}, false)
	if n := sub.queued(); n != 2 {
		t.Fatalf("queued entries: got %d, want 2 (one per path)", n)
	}
	events, rescan := sub.take()
	if rescan {
		t.Fatal("no rescan was asked for")
	}
	slices.SortFunc(events, func(a, b fsnotify.Event) int { return strings.Compare(a.Name, b.Name) })
	want := []fsnotify.Event{{Name: "/w/log.txt", Op: fsnotify.Write}, {Name: "/w/sub", Op: fsnotify.Create | fsnotify.Remove}}
	if !slices.Equal(events, want) {
		t.Fatalf("events: got %v, want %v", events, want)
	}
	if n := sub.queued(); n != 0 {
		t.Fatalf("queued after take: %d", n)
	}
}
