//go:build unix

package fsops

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFileEmpty: a regular file of size 0 whose first read finds nothing is answered in the one reply, with
// its stat, no payload and no handle; one that stats as 0 but has bytes (a kernel file) is kept open at offset 0.
func TestReadFileEmpty(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "empty"), "")
	ops := New()
	defer ops.CloseAll()
	r := run(t, ops, "readFile", map[string]any{"path": filepath.Join(root, "empty"), "max": 1 << 19}, nil).must(t)
	if _, has := r.json["handle"]; has || len(r.payload) != 0 {
		t.Fatalf("empty file: %v, payload %q", r.json, r.payload)
	}
	if stat, _ := r.json["stat"].(map[string]any); stat["kind"] != "file" || stat["size"] != float64(0) {
		t.Fatalf("empty file: stat %v", r.json["stat"])
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		return
	}
	kernel := run(t, ops, "readFile", map[string]any{"path": "/proc/self/status", "max": 1 << 19}, nil)
	handle := kernel.handle(t)
	// The probe was positional: an unpositioned read starts at the beginning.
	first := run(t, ops, "pread", map[string]any{"handle": handle, "length": 5}, nil).must(t)
	if string(first.payload) != "Name:" {
		t.Fatalf("first read of /proc/self/status: %q", first.payload)
	}
}

// TestListDirOneRequest: a directory whose entries fit the first page is listed, lstat'ed and closed in one
// request, entries exactly as readdir gives them; a larger one keeps a handle that readdir continues.
func TestListDirOneRequest(t *testing.T) {
	root := t.TempDir()
	fixture(t, root)
	ops := New()
	defer ops.CloseAll()
	fused := run(t, ops, "listDir", map[string]any{"path": root, "max": 1000}, nil).must(t)
	if _, has := fused.json["handle"]; has || fused.json["done"] != true {
		t.Fatalf("listDir kept a handle or is not done: %v", fused.json)
	}
	opened := run(t, ops, "opendir", map[string]any{"path": root}, nil)
	page := run(t, ops, "readdir", map[string]any{"handle": opened.handle(t), "max": 1000}, nil).must(t)
	run(t, ops, "close", map[string]any{"handle": opened.handle(t)}, nil).must(t)
	if !sameJSON(fused.json, page.json) {
		t.Fatalf("listDir %v\nreaddir %v", fused.json, page.json)
	}

	big := filepath.Join(root, "big")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		writeFile(t, filepath.Join(big, fmt.Sprint(i)), "")
	}
	first := run(t, ops, "listDir", map[string]any{"path": big, "max": 3}, nil)
	handle := first.handle(t)
	if first.json["done"] != false || len(first.json["entries"].([]any)) != 3 {
		t.Fatalf("first page of 5 entries at max 3: %v", first.json)
	}
	rest := run(t, ops, "readdir", map[string]any{"handle": handle, "max": 3}, nil).must(t)
	if rest.json["done"] != true || len(rest.json["entries"].([]any)) != 2 {
		t.Fatalf("the rest: %v", rest.json)
	}
	run(t, ops, "close", map[string]any{"handle": handle}, nil).must(t)
	if n := ops.table.Len(); n != 0 {
		t.Fatalf("%d handles open", n)
	}
}

// TestListDirFailures: the open fails as opendir does; bad arguments fail EINVAL.
func TestListDirFailures(t *testing.T) {
	root := t.TempDir()
	fixture(t, root)
	ops := New()
	defer ops.CloseAll()
	p := func(name string) string { return filepath.Join(root, name) }
	run(t, ops, "listDir", map[string]any{"path": p("missing"), "max": 10}, nil).
		expectFailure(t, "ENOENT", "opendir", p("missing"), "")
	run(t, ops, "listDir", map[string]any{"path": p("file"), "max": 10}, nil).
		expectFailure(t, "ENOTDIR", "opendir", p("file"), "")
	for _, args := range []map[string]any{{"path": root}, {"path": root, "max": 0}, {"max": 1}} {
		if r := run(t, ops, "listDir", args, nil); r.failure == nil || r.failure.Code != "EINVAL" {
			t.Errorf("%v: %+v %v; want EINVAL", args, r.failure, r.json)
		}
	}
}

// TestMkdtempFile: with file, the empty file is created in the new directory and named in the reply; a name that
// is not one path component fails EINVAL before anything but the directory exists; a file that cannot be created
// fails as writeFile's open does and leaves the directory, as Node's createTempFile does.
func TestMkdtempFile(t *testing.T) {
	root := t.TempDir()
	ops := New()
	defer ops.CloseAll()
	r := run(t, ops, "mkdtemp", map[string]any{"path": filepath.Join(root, "tmp-"), "file": "x.txt"}, nil).must(t)
	dir, file := r.json["path"].(string), r.json["file"].(string)
	if file != dir+"/x.txt" {
		t.Fatalf("file %q in %q", file, dir)
	}
	if info, err := os.Stat(file); err != nil || info.Size() != 0 || !info.Mode().IsRegular() {
		t.Fatalf("stat %s: %v %v", file, info, err)
	}
	for _, name := range []string{"", ".", "..", "a/b", "a\x00b"} {
		r := run(t, ops, "mkdtemp", map[string]any{"path": filepath.Join(root, "bad-"), "file": name}, nil)
		if r.failure == nil || r.failure.Code != "EINVAL" {
			t.Errorf("file %q: %+v %v; want EINVAL", name, r.failure, r.json)
		}
	}
	long := strings.Repeat("n", 300)
	r = run(t, ops, "mkdtemp", map[string]any{"path": filepath.Join(root, "long-"), "file": long}, nil)
	if r.failure == nil || r.failure.Code != "ENAMETOOLONG" || r.failure.Syscall != "open" ||
		!strings.HasSuffix(r.failure.Path, "/"+long) {
		t.Fatalf("a name too long: %+v", r.failure)
	}
	made, _ := filepath.Glob(filepath.Join(root, "long-*"))
	if len(made) != 1 {
		t.Fatalf("directories left by the failed file: %v", made)
	}
	// Without file, mkdtemp answers as in protocol 1: {path} only.
	plain := run(t, ops, "mkdtemp", map[string]any{"path": filepath.Join(root, "plain-")}, nil).must(t)
	if _, has := plain.json["file"]; has || len(plain.json) != 1 {
		t.Fatalf("plain mkdtemp: %v", plain.json)
	}
}
