//go:build unix

package execop

import (
	"encoding/json"
	"testing"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// BenchmarkExecTrue measures a whole exec of `true` (spawn, wait, settle); Node spawns it in about 1.4 ms.
func BenchmarkExecTrue(b *testing.B) {
	dir := b.TempDir()
	r := New(dir)
	raw, _ := json.Marshal(map[string]any{"argv": []string{"/bin/true"}, "cwd": dir, "env": map[string]any{}})
	for b.Loop() {
		call := &proto.Call{Op: "exec", Args: raw, Control: proto.NewControl(), Events: newFakeEvents()}
		if _, err := r.Handle(call); err != nil {
			b.Fatal(err)
		}
	}
}
