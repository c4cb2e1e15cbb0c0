//go:build linux

package fsops

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// reopened opens the descriptor a reply offers through /proc, as a client on this machine does.
func reopened(t *testing.T, r result, flags int) *os.File {
	t.Helper()
	fd, isNumber := r.json["fd"].(float64)
	if !isNumber {
		t.Fatalf("no fd in %v", r.json)
	}
	file, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), int(fd)), flags, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = file.Close() })
	return file
}

// TestSameHostFdOffered: open {mode: "read"}, readFile (when it keeps the file open) and write {keep} name the
// descriptor of a regular file when asked with fd, and the descriptor reaches the same file.
func TestSameHostFdOffered(t *testing.T) {
	root := t.TempDir()
	big := filepath.Join(root, "big")
	writeFile(t, big, "0123456789")
	ops := New()
	defer ops.CloseAll()

	for _, r := range []result{
		run(t, ops, "open", map[string]any{"path": big, "mode": "read", "fd": true}, nil).must(t),
		run(t, ops, "readFile", map[string]any{"path": big, "max": 4, "fd": true}, nil).must(t),
	} {
		buf := make([]byte, 4)
		if _, err := reopened(t, r, os.O_RDONLY).ReadAt(buf, 6); err != nil || string(buf) != "6789" {
			t.Fatalf("read through the descriptor: %q, %v", buf, err)
		}
	}

	out := filepath.Join(root, "out")
	w := run(t, ops, "write", map[string]any{"path": out, "append": false, "keep": true, "fd": true}, []byte("ab")).must(t)
	if _, err := reopened(t, w, os.O_WRONLY).WriteAt([]byte("cd"), 2); err != nil {
		t.Fatal(err)
	}
	a := run(t, ops, "write", map[string]any{"path": out, "append": true, "keep": true, "fd": true}, []byte("ef")).must(t)
	if _, err := reopened(t, a, os.O_WRONLY|os.O_APPEND).Write([]byte("gh")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); string(got) != "abcdefgh" {
		t.Fatalf("file = %q", got)
	}
}

// TestSameHostFdOnlyWhenAskedForRegularFiles: without fd the replies are protocol 1's; FIFOs, devices and
// directories never get one (reopening them through /proc is another stream, not the same file).
func TestSameHostFdOnlyWhenAskedForRegularFiles(t *testing.T) {
	root := t.TempDir()
	fixture(t, root)
	ops := New()
	defer ops.CloseAll()
	file := filepath.Join(root, "file")
	for _, r := range []result{
		run(t, ops, "open", map[string]any{"path": file, "mode": "read"}, nil).must(t),
		run(t, ops, "readFile", map[string]any{"path": file, "max": 1}, nil).must(t),
		run(t, ops, "write", map[string]any{"path": file, "append": true, "keep": true}, nil).must(t),
		run(t, ops, "open", map[string]any{"path": filepath.Join(root, "dir"), "mode": "read", "fd": true}, nil).must(t),
		run(t, ops, "open", map[string]any{"path": "/dev/null", "mode": "read", "fd": true}, nil).must(t),
		run(t, ops, "write", map[string]any{"path": "/dev/null", "append": false, "keep": true, "fd": true}, nil).must(t),
		// A reader (no mode) is for the line reader and the binary reader: never offered.
		run(t, ops, "open", map[string]any{"path": file, "fd": true}, nil).must(t),
	} {
		if _, has := r.json["fd"]; has {
			t.Errorf("fd offered: %v", r.json)
		}
	}
}
