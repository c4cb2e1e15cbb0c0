package bufpool

import "testing"

func TestGetSizesAndClasses(t *testing.T) {
	for _, n := range []int{0, 1, Class - 1, Class, Class + 1, 512<<10 + 31, MaxSize, MaxSize + 1} {
		b := Get(n)
		if len(b) != n {
			t.Fatalf("Get(%d) has length %d", n, len(b))
		}
		if _, pooled := classOf(n); pooled && cap(b)%Class != 0 {
			t.Fatalf("Get(%d) has capacity %d, not a class size", n, cap(b))
		}
		Put(b)
	}
}

func TestPutThenGetReuses(t *testing.T) {
	// sync.Pool may drop an entry at any time (a GC, or at random under the race detector); a few attempts make
	// a reuse all but certain.
	for range 20 {
		b := Get(512<<10 + 31)
		Put(b)
		if c := Get(512<<10 + 1); &c[:1][0] == &b[:1][0] {
			return
		}
	}
	t.Fatal("a buffer given back was never handed out again")
}

func TestPutIgnoresForeignBuffers(t *testing.T) {
	Put(make([]byte, Class+1)) // capacity not a class size
	Put(make([]byte, 10))
	Put(nil)
	if b := Get(Class + 1); cap(b) != 2*Class {
		t.Fatalf("capacity %d after foreign puts", cap(b))
	}
}
