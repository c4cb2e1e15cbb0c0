//go:build unix

package fsops

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestReadFileFused: a regular file of 1..max bytes (also through a link) comes back whole in the one reply,
// with its stat and no handle left open.
func TestReadFileFused(t *testing.T) {
	root := t.TempDir()
	fixture(t, root)
	exact := bytes.Repeat([]byte("ab"), 512)
	if err := os.WriteFile(filepath.Join(root, "exact"), exact, 0o644); err != nil {
		t.Fatal(err)
	}
	ops := New()
	defer ops.CloseAll()
	for name, want := range map[string][]byte{"file": []byte("hello\n"), "filelink": []byte("hello\n"), "exact": exact} {
		r := run(t, ops, "readFile", map[string]any{"path": filepath.Join(root, name), "max": len(exact)}, nil).must(t)
		if !bytes.Equal(r.payload, want) {
			t.Errorf("%s: payload %q, want %q", name, r.payload, want)
		}
		if _, has := r.json["handle"]; has {
			t.Errorf("%s: a fused read left a handle: %v", name, r.json)
		}
		stat, _ := r.json["stat"].(map[string]any)
		if stat["kind"] != "file" || stat["size"] != float64(len(want)) || stat["name"] != name {
			t.Errorf("%s: stat %v", name, stat)
		}
	}
	if n := ops.table.Len(); n != 0 {
		t.Fatalf("%d handles open after fused reads", n)
	}
}

// TestReadFileFallsBackToOpen: whatever does not fit one read — one byte over max, a directory, a
// device — is answered exactly as open {mode:"read"} answers, handle included.
func TestReadFileFallsBackToOpen(t *testing.T) {
	root := t.TempDir()
	fixture(t, root)
	writeFile(t, filepath.Join(root, "empty"), "")
	ops := New()
	defer ops.CloseAll()
	for _, tc := range []struct {
		name string
		max  int
		kind string
		size float64
	}{
		{"file", 5, "file", 6},
		{"dir", 1 << 19, "directory", -1},
		{"dirlink", 1 << 19, "directory", -1},
	} {
		path := filepath.Join(root, tc.name)
		fused := run(t, ops, "readFile", map[string]any{"path": path, "max": tc.max}, nil)
		opened := run(t, ops, "open", map[string]any{"path": path, "mode": "read"}, nil)
		fused.handle(t)
		opened.handle(t)
		if len(fused.payload) != 0 {
			t.Errorf("%s: a payload without a fused read: %q", tc.name, fused.payload)
		}
		delete(fused.json, "handle")
		delete(opened.json, "handle")
		stat, _ := fused.json["stat"].(map[string]any)
		if stat["kind"] != tc.kind || (tc.size >= 0 && stat["size"] != tc.size) {
			t.Errorf("%s: stat %v", tc.name, stat)
		}
		if !sameJSON(fused.json, opened.json) {
			t.Errorf("%s: readFile %v, open %v", tc.name, fused.json, opened.json)
		}
	}
	if _, err := os.Stat("/dev/null"); err == nil {
		r := run(t, ops, "readFile", map[string]any{"path": "/dev/null", "max": 1 << 19}, nil)
		r.handle(t)
		if stat, _ := r.json["stat"].(map[string]any); stat["kind"] != "other" {
			t.Errorf("/dev/null: stat %v", stat)
		}
	}
	if n := ops.table.Len(); n != 7 {
		t.Fatalf("%d handles open, want 7 (every fallback keeps its file open)", n)
	}
}

// TestReadFileFailures: the open's failures as open reports them; bad arguments fail EINVAL.
func TestReadFileFailures(t *testing.T) {
	root := t.TempDir()
	fixture(t, root)
	ops := New()
	defer ops.CloseAll()
	p := func(name string) string { return filepath.Join(root, name) }
	run(t, ops, "readFile", map[string]any{"path": p("missing"), "max": 10}, nil).
		expectFailure(t, "ENOENT", "open", p("missing"), "ENOENT: no such file or directory, open '"+p("missing")+"'")
	run(t, ops, "readFile", map[string]any{"path": p("dangling"), "max": 10}, nil).
		expectFailure(t, "ENOENT", "open", p("dangling"), "")
	run(t, ops, "readFile", map[string]any{"path": p("loop"), "max": 10}, nil).expectFailure(t, "ELOOP", "open", p("loop"), "")
	run(t, ops, "readFile", map[string]any{"path": p("file/x"), "max": 10}, nil).
		expectFailure(t, "ENOTDIR", "open", p("file/x"), "")
	for _, args := range []map[string]any{{"path": p("file")}, {"path": p("file"), "max": -1}, {"path": p("file"), "max": 1.5}, {"max": 1}} {
		if r := run(t, ops, "readFile", args, nil); r.failure == nil || r.failure.Code != "EINVAL" {
			t.Errorf("%v: %+v %v; want EINVAL", args, r.failure, r.json)
		}
	}
	if n := ops.table.Len(); n != 0 {
		t.Fatalf("%d handles open after failures", n)
	}
}

// sameJSON compares decoded JSON objects by their encoding.
func sameJSON(a, b map[string]any) bool {
	return jsonString(a) == jsonString(b)
}

func jsonString(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return "unencodable: " + err.Error()
	}
	return string(raw)
}
