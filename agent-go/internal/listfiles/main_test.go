package listfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// Every walk joins its workers and its abort watcher before it returns.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared.root != "" {
		os.RemoveAll(shared.root)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// shared is one larger tree (9000 files in 300 × 7 directories) made once for the tests that need volume.
var shared struct {
	once sync.Once
	root string
	err  error
}

const sharedFiles = 9000

func sharedTree(t *testing.T) string {
	t.Helper()
	shared.once.Do(func() {
		shared.root, shared.err = os.MkdirTemp("", "listfiles-test-")
		for i := 0; i < sharedFiles && shared.err == nil; i++ {
			path := filepath.Join(shared.root, fmt.Sprintf("d%03d/e%02d/f%05d", i%300, i%7, i))
			if shared.err = os.MkdirAll(filepath.Dir(path), 0o755); shared.err == nil {
				shared.err = os.WriteFile(path, nil, 0o644)
			}
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.root
}
