package decode

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// vectors are decodings verified with Node 20 (`new TextDecoder().decode(Buffer.from(hex, "hex"))`).
var vectors = []struct {
	name string
	in   string // hex
	want string
}{
	{"empty", "", ""},
	{"ascii", "616263", "abc"},
	{"euro", "e282ac", "€"},
	{"emoji", "f09f9880", "😀"},
	{"leading BOM dropped", "efbbbf61", "a"},
	{"only a BOM", "efbbbf", ""},
	{"second BOM kept", "efbbbfefbbbf", "\uFEFF"},
	{"later FEFF kept", "61efbbbf", "a\uFEFF"},
	{"FEFF after replacement kept", "e282efbbbf61", "\uFFFD\uFEFFa"},
	{"surrogate rejected at second byte", "eda080", "\uFFFD\uFFFD\uFFFD"},
	{"overlong two-byte", "c0af", "\uFFFD\uFFFD"},
	{"above U+10FFFF", "f4908080", "\uFFFD\uFFFD\uFFFD\uFFFD"},
	{"cut by newline", "e2820a", "\uFFFD\n"},
	{"cut by ASCII", "f09f9841", "\uFFFDA"},
	{"cut by a new lead", "e282e282ac", "\uFFFD€"},
	{"incomplete tail", "61e282", "a\uFFFD"},
	{"incomplete four-byte tail", "f09f98", "\uFFFD"},
	{"lone continuation", "80", "\uFFFD"},
	{"continuations", "8080bf", "\uFFFD\uFFFD\uFFFD"},
	{"UTF-16 LE BOM not sniffed", "fffe6100", "\uFFFD\uFFFDa\x00"},
	{"UTF-16 BE BOM not sniffed", "feff0061", "\uFFFD\uFFFD\x00a"},
	{"F5 and FF invalid leads", "f5ff", "\uFFFD\uFFFD"},
	{"overlong three-byte", "e080af", "\uFFFD\uFFFD\uFFFD"},
	{"overlong four-byte", "f08080af", "\uFFFD\uFFFD\uFFFD\uFFFD"},
	{"max code point", "f48fbfbf", "\U0010FFFF"},
	{"last before surrogates", "ed9fbf", "\uD7FF"},
	{"raw bytes of spill test", "6680006f", "f\uFFFD\x00o"},
	{"split BOM prefix then invalid", "efbb41", "\uFFFDA"},
	{"BOM bytes after invalid", "ffefbbbf", "\uFFFD\uFEFF"},
}

func TestVectorsOneShot(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			if got := String(mustHex(t, v.in)); got != v.want {
				t.Fatalf("decode %s = %q, want %q", v.in, got, v.want)
			}
		})
	}
}

// TestVectorsEverySplit feeds every vector in every two- and three-piece chunking.
func TestVectorsEverySplit(t *testing.T) {
	for _, v := range vectors {
		in := mustHex(t, v.in)
		for i := 0; i <= len(in); i++ {
			for j := i; j <= len(in); j++ {
				got := decodeChunks(in[:i], in[i:j], in[j:])
				if got != v.want {
					t.Fatalf("%s split at %d,%d = %q, want %q", v.name, i, j, got, v.want)
				}
			}
		}
	}
}

func TestBOMSplitAcrossChunksWithEmptyChunks(t *testing.T) {
	got := decodeChunks([]byte{}, []byte{0xEF}, nil, []byte{0xBB}, []byte{}, []byte{0xBF, 'x', 0xEF, 0xBB, 0xBF})
	if got != "x\uFEFF" {
		t.Fatalf("got %q", got)
	}
}

func TestRangeDecoderKeepsBOM(t *testing.T) {
	var d Decoder
	got := string(d.Decode([]byte("\xEF\xBB\xBFa\xE2"))) + string(d.Flush())
	if got != "\uFEFFa\uFFFD" {
		t.Fatalf("got %q", got)
	}
}

// TestRandomChunkingsMatchOneShot checks that chunking never changes the text.
func TestRandomChunkingsMatchOneShot(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		in := randomBytes(rng, rng.IntN(40))
		want := String(in)
		var chunks [][]byte
		for rest := in; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			chunks, rest = append(chunks, rest[:n]), rest[n:]
		}
		if got := decodeChunks(chunks...); got != want {
			t.Fatalf("input %x chunked %x: got %q, want %q", in, chunks, got, want)
		}
	}
}

// TestAgainstNode compares random byte strings (biased towards tricky bytes) and the vector table with Node's
// TextDecoder. It is skipped when node is not on PATH.
func TestAgainstNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not on PATH")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var inputs [][]byte
	for _, v := range vectors {
		inputs = append(inputs, mustHex(t, v.in))
	}
	for range 2000 {
		inputs = append(inputs, randomBytes(rng, rng.IntN(24)))
	}
	var stdin strings.Builder
	for _, in := range inputs {
		stdin.WriteString(hex.EncodeToString(in) + "\n")
	}
	const script = `const lines = require("fs").readFileSync(0, "latin1").split("\n"); lines.pop();
process.stdout.write(lines.map(h => Buffer.from(new TextDecoder().decode(Buffer.from(h, "hex"))).toString("hex")).join("\n") + "\n");`
	cmd := exec.Command(node, "-e", script)
	cmd.Stdin = strings.NewReader(stdin.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	scanner := bufio.NewScanner(bytes.NewReader(out))
	for i := 0; scanner.Scan(); i++ {
		want := mustHex(t, scanner.Text())
		if got := String(inputs[i]); got != string(want) {
			t.Fatalf("input %x: got %q, node %q", inputs[i], got, want)
		}
		// Chunked at every byte, the streaming decoder must agree too.
		var chunks [][]byte
		for _, b := range inputs[i] {
			chunks = append(chunks, []byte{b})
		}
		if got := decodeChunks(chunks...); got != string(want) {
			t.Fatalf("input %x byte by byte: got %q, node %q", inputs[i], got, want)
		}
	}
}

func decodeChunks(chunks ...[]byte) string {
	d := NewStream()
	var out []byte
	for _, c := range chunks {
		out = append(out, d.Decode(c)...)
	}
	return string(append(out, d.Flush()...))
}

// randomBytes draws from bytes that matter to UTF-8: ASCII, continuations, every kind of lead and the BOM.
func randomBytes(rng *rand.Rand, n int) []byte {
	pool := []byte{'a', '\n', 0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
		0xE2, 0xED, 0xEE, 0xEF, 0xBB, 0xF0, 0xF3, 0xF4, 0xF5, 0xFE, 0xFF}
	out := make([]byte, n)
	for i := range out {
		if rng.IntN(4) == 0 {
			out[i] = byte(rng.IntN(256))
		} else {
			out[i] = pool[rng.IntN(len(pool))]
		}
	}
	// Often start with a (possibly partial) BOM.
	if n >= 3 && rng.IntN(3) == 0 {
		copy(out, []byte{0xEF, 0xBB, 0xBF}[:1+rng.IntN(3)])
	}
	return out
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func BenchmarkDecodeASCII(b *testing.B) {
	chunk := bytes.Repeat([]byte("hello world\n"), 5462)
	d := NewStream()
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		d.Decode(chunk)
	}
}
