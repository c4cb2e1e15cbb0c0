package listfiles

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// pageLog collects a request's page events.
type pageLog struct {
	mu    sync.Mutex
	paths []string
	count int
	// onPage runs after each page is recorded (a test's hook).
	onPage func(n int)
}

func (p *pageLog) Emit(queue proto.Queue, event map[string]any, payload []byte) error {
	if queue != proto.BulkQueue || event["kind"] != "page" {
		return fmt.Errorf("unexpected event %v on queue %d", event, queue)
	}
	parts := strings.Split(string(payload), "\x00")
	if parts[len(parts)-1] != "" || len(parts)-1 != event["count"] {
		return fmt.Errorf("page count %v does not match payload %q", event["count"], payload)
	}
	p.mu.Lock()
	if first := event["first"]; first != len(p.paths) {
		p.mu.Unlock()
		return fmt.Errorf("page with first %v after %d paths", first, len(p.paths))
	}
	p.paths = append(p.paths, parts[:len(parts)-1]...)
	p.count++
	n := p.count
	p.mu.Unlock()
	if p.onPage != nil {
		p.onPage(n)
	}
	return nil
}

func (p *pageLog) Unsent() int { return 0 }

// list runs one listFiles request.
func list(t *testing.T, args map[string]any, hook func(*proto.Call, int)) ([]string, proto.Reply, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	call := &proto.Call{ID: 1, Op: "listFiles", Args: raw, Control: proto.NewControl()}
	collected := &pageLog{}
	if hook != nil {
		collected.onPage = func(n int) { hook(call, n) }
	}
	call.Events = collected
	reply, err := Handle(call)
	return collected.paths, reply, err
}

// tree writes files (a trailing "/" makes a directory; "-> target" a symbolic link) below a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		path := filepath.Join(root, name)
		if strings.HasSuffix(name, "/") {
			must(t, os.MkdirAll(path, 0o755))
			continue
		}
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		if target, ok := strings.CutPrefix(content, "-> "); ok {
			must(t, os.Symlink(target, path))
			continue
		}
		must(t, os.WriteFile(path, []byte(content), 0o644))
	}
	return root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func expectPaths(t *testing.T, args map[string]any, want ...string) {
	t.Helper()
	got, reply, err := list(t, args, nil)
	if err != nil {
		t.Fatalf("listFiles %v: %v", args, err)
	}
	if want == nil {
		want = []string{}
	}
	if got == nil {
		got = []string{}
	}
	if !slices.Equal(got, want) {
		t.Errorf("listFiles %v:\n got %q\nwant %q", args, got, want)
	}
	if reply.JSON.(map[string]any)["truncated"] != false {
		t.Errorf("listFiles %v: truncated without a limit", args)
	}
}

func TestOrderIsByteOrderOfPaths(t *testing.T) {
	root := tree(t, map[string]string{"a/b": "", "a.txt": "", "a0": "", "B": "", "é": "", "a/c/d": "", "empty/": ""})
	expectPaths(t, map[string]any{"path": root}, "B", "a.txt", "a/b", "a/c/d", "a0", "é")
}

func TestIgnoreRules(t *testing.T) {
	root := tree(t, map[string]string{
		".git/info/exclude":     "excluded\n",
		".git/HEAD":             "",
		".gitignore":            "*.o\nbuild/\n!keep.o\n/top\n",
		"keep.o":                "",
		"x.o":                   "",
		"excluded":              "",
		"top":                   "",
		"sub/top":               "",
		"sub/.gitignore":        "!x.o\n",
		"sub/x.o":               "",
		"sub/.ignore":           "ignored-by-ignore\n",
		"sub/ignored-by-ignore": "",
		"build/keep.o":          "",
		"link":                  "-> build",
		"nested/.git/HEAD":      "",
		"nested/x.o":            "",
		"nested/sub/excluded":   "",
	})
	expectPaths(t, map[string]any{"path": root},
		".gitignore", "keep.o", "link", "nested/sub/excluded", "nested/x.o", "sub/.gitignore", "sub/.ignore",
		"sub/top", "sub/x.o")
	expectPaths(t, map[string]any{"path": root, "hidden": false},
		"keep.o", "link", "nested/sub/excluded", "nested/x.o", "sub/top", "sub/x.o")
	expectPaths(t, map[string]any{"path": root, "glob": []string{"*.o", "!keep.o"}}, "nested/x.o", "sub/x.o")
	expectPaths(t, map[string]any{"path": filepath.Join(root, "sub")}, ".gitignore", ".ignore", "top", "x.o")
	expectPaths(t, map[string]any{"path": root, "ignore": false, "glob": []string{"build/"}}, "build/keep.o")
}

func TestLimitTruncates(t *testing.T) {
	root := sharedTree(t)
	all, _, err := list(t, map[string]any{"path": root}, nil)
	must(t, err)
	if len(all) != sharedFiles || !slices.IsSorted(all) {
		t.Fatalf("got %d paths, sorted %v", len(all), slices.IsSorted(all))
	}
	for _, limit := range []int{1, 4096, 4097, sharedFiles - 1, sharedFiles, sharedFiles + 1, 1<<53 - 1} {
		got, reply, err := list(t, map[string]any{"path": root, "limit": limit}, nil)
		must(t, err)
		n := min(limit, sharedFiles)
		if !slices.Equal(got, all[:n]) {
			t.Errorf("limit %d: got %d paths, not the first ones", limit, len(got))
		}
		if truncated := reply.JSON.(map[string]any)["truncated"]; truncated != (limit < sharedFiles) {
			t.Errorf("limit %d: truncated %v", limit, truncated)
		}
	}
}

func TestRootFailures(t *testing.T) {
	root := tree(t, map[string]string{"file": ""})
	for _, c := range []struct{ path, code string }{
		{filepath.Join(root, "missing"), "ENOENT"},
		{filepath.Join(root, "file"), "ENOTDIR"},
		{filepath.Join(root, "file", "below"), "ENOTDIR"},
	} {
		// Blank globs select nothing, but the root is still checked first.
		_, _, err := list(t, map[string]any{"path": c.path, "glob": []string{""}}, nil)
		var f *proto.Failure
		if !errors.As(err, &f) || f.Code != c.code || f.Path != c.path || f.Syscall != "scandir" {
			t.Errorf("listFiles %s: %v, want %s", c.path, err, c.code)
		}
	}
	for _, args := range []map[string]any{{}, {"path": root, "limit": 0}, {"path": root, "limit": 1.5}} {
		_, _, err := list(t, args, nil)
		var f *proto.Failure
		if !errors.As(err, &f) || f.Code != "EINVAL" {
			t.Errorf("listFiles %v: %v, want EINVAL", args, err)
		}
	}
}

// An abort after the first page ends the walk promptly (LF16: within 50 ms on an idle machine; the bound here
// allows for a loaded one) with no page after the error.
func TestAbortStopsTheWalk(t *testing.T) {
	root := sharedTree(t)
	var abortedAt time.Time
	got, _, err := list(t, map[string]any{"path": root}, func(call *proto.Call, n int) {
		if n == 1 {
			abortedAt = time.Now()
			call.Control.Abort()
		}
	})
	elapsed := time.Since(abortedAt)
	var f *proto.Failure
	if !errors.As(err, &f) || f.Code != "aborted" {
		t.Fatalf("got %v after %d paths, want aborted", err, len(got))
	}
	if len(got) != PagePaths {
		t.Errorf("%d paths delivered, want only the first page", len(got))
	}
	if elapsed > time.Second {
		t.Errorf("the walk took %v to stop", elapsed)
	}
	t.Logf("stopped %v after the abort", elapsed)
}

func TestNonUTF8NamesAreDecoded(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a\xffb"), nil, 0o644); err != nil {
		t.Skip("the file system refuses names that are not UTF-8")
	}
	got, _, err := list(t, map[string]any{"path": root}, nil)
	must(t, err)
	if !slices.Equal(got, []string{"a\uFFFDb"}) || !bytes.Equal([]byte(got[0]), []byte("a\xef\xbf\xbdb")) {
		t.Errorf("got %q", got)
	}
}
