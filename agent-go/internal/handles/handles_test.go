package handles

import (
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestIdsCountFromOneAndAreNeverReused(t *testing.T) {
	table := New[string, int](Limit)
	first, failure := table.AddFile("a")
	if failure != nil || first != 1 {
		t.Fatalf("first id = %d, %v; want 1", first, failure)
	}
	second, _ := table.AddDir(7)
	if second != 2 {
		t.Fatalf("second id = %d; want 2", second)
	}
	if _, _, _, ok := table.Remove(first); !ok {
		t.Fatal("remove of an open handle reported unknown")
	}
	third, _ := table.AddFile("c")
	if third != 3 {
		t.Fatalf("id after a remove = %d; want 3 (ids are never reused)", third)
	}
}

func TestLookupFailures(t *testing.T) {
	table := New[string, int](Limit)
	file, _ := table.AddFile("f")
	dir, _ := table.AddDir(1)
	cases := []struct {
		name    string
		lookup  func() (any, string)
		message string
	}{
		{"file as dir", func() (any, string) { v, f := table.Dir(file); return v, msg(f) }, "not a directory handle"},
		{"dir as file", func() (any, string) { v, f := table.File(dir); return v, msg(f) }, "not a file handle"},
		{"unknown file", func() (any, string) { v, f := table.File(99); return v, msg(f) }, "unknown handle"},
		{"unknown dir", func() (any, string) { v, f := table.Dir(0); return v, msg(f) }, "unknown handle"},
		{"good file", func() (any, string) { v, f := table.File(file); return v, msg(f) }, ""},
		{"good dir", func() (any, string) { v, f := table.Dir(dir); return v, msg(f) }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, got := c.lookup(); got != c.message {
				t.Fatalf("message = %q; want %q", got, c.message)
			}
		})
	}
	if v, _ := table.File(file); v != "f" {
		t.Fatalf("file value = %q", v)
	}
	if _, _, _, ok := table.Remove(12345); ok {
		t.Fatal("remove of an unknown id reported ok")
	}
}

func msg(f *proto.Failure) string {
	if f == nil {
		return ""
	}
	if f.Code != "EBADF" {
		return "code " + f.Code
	}
	return f.Message
}

func TestLimit(t *testing.T) {
	table := New[int, int](3)
	for i := range 3 {
		if _, failure := table.AddFile(i); failure != nil {
			t.Fatalf("add %d: %v", i, failure)
		}
	}
	if !table.Full() {
		t.Fatal("Full() = false at the limit")
	}
	_, failure := table.AddDir(9)
	if failure == nil || failure.Code != "EMFILE" || failure.Message != "EMFILE: too many open files" {
		t.Fatalf("over the limit: %+v", failure)
	}
	table.Remove(2)
	if id, failure := table.AddDir(9); failure != nil || id != 4 {
		t.Fatalf("after a remove: id %d, %v; want 4", id, failure)
	}
}

func TestDefaultLimitIs4096(t *testing.T) {
	table := New[int, int](Limit)
	for i := range 4096 {
		if _, failure := table.AddFile(i); failure != nil {
			t.Fatalf("add %d: %v", i, failure)
		}
	}
	if _, failure := table.AddFile(0); failure == nil || failure.Code != "EMFILE" {
		t.Fatalf("handle 4097: %v", failure)
	}
}

func TestDrain(t *testing.T) {
	table := New[string, int](Limit)
	table.AddFile("a")
	table.AddDir(1)
	table.AddFile("b")
	files, dirs := table.Drain()
	if len(files) != 2 || len(dirs) != 1 || table.Len() != 0 {
		t.Fatalf("drain: %v %v, left %d", files, dirs, table.Len())
	}
	if id, _ := table.AddFile("c"); id != 4 {
		t.Fatalf("id after drain = %d; want 4", id)
	}
}

func TestConcurrentUse(t *testing.T) {
	table := New[int, int](Limit)
	var wg sync.WaitGroup
	ids := make(chan uint64, 800)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				id, failure := table.AddFile(w*1000 + i)
				if failure != nil {
					t.Error(failure)
					return
				}
				if v, failure := table.File(id); failure != nil || v != w*1000+i {
					t.Errorf("lookup %d: %v %v", id, v, failure)
				}
				ids <- id
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[uint64]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %d handed out twice", id)
		}
		seen[id] = true
	}
	if len(seen) != 800 {
		t.Fatalf("got %d ids", len(seen))
	}
}
