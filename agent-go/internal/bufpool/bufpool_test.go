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

// The two ends of the pooled range are pooled, the sizes just outside are not (killed mutants: `n < Class` as
// `n <= Class`, `n > MaxSize` as `n >= MaxSize`).
func TestClassBoundaries(t *testing.T) {
	cases := []struct {
		n      int
		index  int
		pooled bool
	}{
		{Class - 1, 0, false}, {Class, 0, true}, {Class + 1, 1, true},
		{MaxSize - 1, MaxSize/Class - 1, true}, {MaxSize, MaxSize/Class - 1, true}, {MaxSize + 1, 0, false},
	}
	for _, c := range cases {
		if index, pooled := classOf(c.n); index != c.index || pooled != c.pooled {
			t.Errorf("classOf(%d) = %d, %v; want %d, %v", c.n, index, pooled, c.index, c.pooled)
		}
	}
}
