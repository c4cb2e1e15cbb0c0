//go:build unix

package fsops

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// result is one operation's answer as the client would see it: the reply JSON decoded generically, the
// payload, or the failure.
type result struct {
	json    map[string]any
	payload []byte
	failure *proto.Failure
}

// run calls op with args (marshalled to JSON, as on the wire) and an optional payload.
func run(t *testing.T, ops *Ops, op string, args map[string]any, payload []byte) result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return runRaw(t, ops, op, raw, payload, proto.NewControl())
}

func runRaw(t *testing.T, ops *Ops, op string, raw []byte, payload []byte, control *proto.Control) result {
	t.Helper()
	handler, found := ops.Handlers()[op]
	if !found {
		t.Fatalf("no handler for %s", op)
	}
	call := &proto.Call{ID: 1, Op: op, Args: raw, Payload: payload, Control: control}
	reply, err := handler(call)
	if err != nil {
		failure, isFailure := err.(*proto.Failure)
		if !isFailure {
			t.Fatalf("%s returned a non-Failure error %T: %v", op, err, err)
		}
		return result{failure: failure}
	}
	encoded, err := json.Marshal(reply.JSON)
	if err != nil {
		t.Fatalf("%s reply does not encode: %v", op, err)
	}
	var decoded map[string]any
	if err := json.Unmarshal(encoded, &decoded); err != nil {
		t.Fatalf("%s reply %s is not an object: %v", op, encoded, err)
	}
	return result{json: decoded, payload: reply.Payload}
}

// must fails the test unless the operation succeeded.
func (r result) must(t *testing.T) result {
	t.Helper()
	if r.failure != nil {
		t.Fatalf("unexpected failure %+v", r.failure)
	}
	return r
}

// expectFailure checks code, syscall and path (path "" = must be absent) and, when message is not "", the message.
func (r result) expectFailure(t *testing.T, code, syscall, path, message string) {
	t.Helper()
	if r.failure == nil {
		t.Fatalf("expected %s, got success %v", code, r.json)
	}
	f := r.failure
	if f.Code != code || f.Syscall != syscall || f.Path != path {
		t.Fatalf("failure = {%s %s %q}; want {%s %s %q} (%s)", f.Code, f.Syscall, f.Path, code, syscall, path, f.Message)
	}
	if message != "" && f.Message != message {
		t.Fatalf("message = %q; want %q", f.Message, message)
	}
}

func (r result) handle(t *testing.T) float64 {
	t.Helper()
	id, found := r.must(t).json["handle"].(float64)
	if !found {
		t.Fatalf("no handle in %v", r.json)
	}
	return id
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture builds the tree every scenario starts from:
//
//	file ("hello\n"), dir/inner.txt, emptydir/, dangling -> nowhere, loop -> loop, dirlink -> dir,
//	filelink -> file, fifo (a FIFO)
func fixture(t *testing.T, root string) {
	t.Helper()
	writeFile(t, filepath.Join(root, "file"), "hello\n")
	for _, d := range []string{"dir", "emptydir"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(root, "dir", "inner.txt"), "inner\n")
	for link, target := range map[string]string{"dangling": "nowhere", "loop": "loop", "dirlink": "dir", "filelink": "file"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	mkfifo(t, filepath.Join(root, "fifo"))
}

// tree lists everything under root (relative path → kind and, for files, size), for comparing end states.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		entry := rel + " " + info.Mode().Type().String()
		if info.Mode().IsRegular() {
			entry += " " + string(rune('0'+min(info.Size(), 9)))
		}
		out = append(out, entry)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}
