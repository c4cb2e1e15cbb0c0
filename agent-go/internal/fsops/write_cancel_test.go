//go:build unix

package fsops

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// writeCancelled runs write with a control that was cancelled before the request started, so every point at
// which write looks at its control sees the cancel.
func writeCancelled(t *testing.T, ops *Ops, args map[string]any, payload string) result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	control := proto.NewControl()
	control.Abort()
	return runRaw(t, ops, "write", raw, []byte(payload), control)
}

func readBack(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A cancelled write stops where the env's and Node's checkpoints are (spec/semantics.md A3): after making the
// parent (nothing opened), and for writeFile after the open (file truncated, nothing written). appendFile has
// no checkpoint between its open and its write, so a cancelled append without parents still appends.
func TestWriteStopsAtItsCheckpointsWhenCancelled(t *testing.T) {
	ops := New()
	defer ops.CloseAll()
	dir := t.TempDir()

	inNew := filepath.Join(dir, "new", "f.txt")
	writeCancelled(t, ops, map[string]any{"path": inNew, "append": false}, "x").
		expectFailure(t, "aborted", "", "", "aborted")
	if _, err := os.Stat(filepath.Dir(inNew)); err != nil {
		t.Fatalf("the parent was not made before the checkpoint: %v", err)
	}
	if _, err := os.Lstat(inNew); !os.IsNotExist(err) {
		t.Fatalf("the file exists after an abort right after the parent: %v", err)
	}
	writeCancelled(t, ops, map[string]any{"path": filepath.Join(dir, "new2", "f.txt"), "append": true}, "x").
		expectFailure(t, "aborted", "", "", "aborted")

	existing := filepath.Join(dir, "existing.txt")
	writeFile(t, existing, "old content")
	writeCancelled(t, ops, map[string]any{"path": existing, "append": false, "parents": false}, "new").
		expectFailure(t, "aborted", "", "", "The operation was aborted")
	if got := readBack(t, existing); got != "" {
		t.Fatalf("after an abort at the open the file holds %q, want it truncated and empty", got)
	}

	writeFile(t, existing, "old")
	writeCancelled(t, ops, map[string]any{"path": existing, "append": true, "parents": false}, "+more").must(t)
	if got := readBack(t, existing); got != "old+more" {
		t.Fatalf("a cancelled append without parents holds %q, want the whole append", got)
	}
	if ops.table.Len() != 0 {
		t.Fatalf("%d handles left open", ops.table.Len())
	}
}
