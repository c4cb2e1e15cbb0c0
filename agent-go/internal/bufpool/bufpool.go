// Package bufpool recycles the large byte buffers of bulk transfers (the bodies of writeChunk frames, the
// payloads of pread replies). A fresh 512 KiB buffer costs zeroing, page faults and garbage collection; a file
// written or read in 512 KiB pieces needs a new one for every piece, so reusing them is most of the agent's
// CPU time per byte that is not a system call.
//
// Buffers are kept in size classes of Class bytes and live in sync.Pools, so whatever is not reused is freed
// by the garbage collector as usual: the pool never holds memory the program does not recently need. A buffer
// that is not given back is simply garbage.
package bufpool

import "sync"

// Class is the granularity of the size classes; buffers smaller than Class are not pooled.
const Class = 64 << 10

// MaxSize bounds the pooled sizes (a whole frame, 16 MiB).
const MaxSize = 16 << 20

// pools[i] holds buffers of capacity (i+1)*Class.
var pools [MaxSize / Class]sync.Pool

// classOf returns the pool index for a buffer of n bytes and whether such a buffer is pooled.
func classOf(n int) (int, bool) {
	if n < Class || n > MaxSize {
		return 0, false
	}
	return (n+Class-1)/Class - 1, true
}

// Get returns a buffer of length n. Its contents are undefined (not zeroed): callers overwrite it.
func Get(n int) []byte {
	i, pooled := classOf(n)
	if !pooled {
		return make([]byte, n)
	}
	if b, ok := pools[i].Get().(*[]byte); ok {
		return (*b)[:n]
	}
	return make([]byte, n, (i+1)*Class)
}

// Put gives back a buffer obtained from Get; the caller must not touch it afterwards. Buffers of other
// capacities (not from Get) are ignored.
func Put(b []byte) {
	i, pooled := classOf(cap(b))
	if !pooled || cap(b) != (i+1)*Class {
		return
	}
	b = b[:cap(b)]
	pools[i].Put(&b)
}
