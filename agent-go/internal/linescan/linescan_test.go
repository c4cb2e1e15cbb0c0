package linescan

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"testing"

	"golang.org/x/text/encoding/unicode"
)

// vector is pi-env's unit-test file: a BOM, an invalid sequence before a newline, an empty line, a later
// U+FEFF and no final newline.
var vector = []byte{0xEF, 0xBB, 0xBF, 0x61, 0x0A, 0xE2, 0x82, 0x0A, 0x0A, 0xEF, 0xBB, 0xBF, 0x62, 0x0A, 0xC3, 0xA9}

func scanChunked(t *testing.T, data []byte, startLine float64, endLine *float64, chunk int) Result {
	t.Helper()
	s, err := New(startLine, endLine)
	if err != nil {
		t.Fatalf("New(%v, %v): %v", startLine, endLine, err)
	}
	for len(data) > 0 {
		n := min(chunk, len(data))
		s.Push(data[:n])
		data = data[n:]
	}
	return s.Finish()
}

func end(v float64) *float64 { return &v }

// TestVector checks the values pi-env's tests state for the vector, fed in chunks of 1 to 5 bytes.
func TestVector(t *testing.T) {
	for chunk := 1; chunk <= 5; chunk++ {
		full := scanChunked(t, vector, 0, nil, chunk)
		if full.Newlines != 4 || full.SelectedBytes != 14 || full.FirstLineBytes != 1 {
			t.Errorf("chunk %d, full scan: %+v", chunk, full)
		}
		mid := scanChunked(t, vector, 1, end(3), chunk)
		if mid.Start != 5 || mid.End != 8 || mid.SelectedBytes != 4 || mid.LastLineStart != 8 {
			t.Errorf("chunk %d, lines 1..3: %+v", chunk, mid)
		}
		past := scanChunked(t, vector, 9, nil, chunk)
		want := Result{Newlines: 4, Start: 16, End: 16, FirstLineEnd: 16, LastLineStart: 16}
		if past != want {
			t.Errorf("chunk %d, startLine 9: %+v", chunk, past)
		}
	}
}

func TestInvalidRanges(t *testing.T) {
	cases := []struct {
		start float64
		end   *float64
	}{
		{2, end(2)}, {3, end(1)}, {-1, nil}, {1.5, nil}, {0, end(2.5)}, {math.NaN(), nil},
		{math.Inf(1), nil}, {0, end(math.NaN())}, {maxSafeInteger + 1, nil}, {0, end(maxSafeInteger + 1)},
	}
	for _, c := range cases {
		if _, err := New(c.start, c.end); err != ErrInvalidRange {
			t.Errorf("New(%v, %v) = %v; want ErrInvalidRange", c.start, c.end, err)
		}
	}
	if _, err := New(0, end(maxSafeInteger)); err != nil {
		t.Errorf("largest safe end rejected: %v", err)
	}
}

// TestDecodedLengthKnownSequences uses the replacement counts verified with Node in durable-env.md §4.1.
func TestDecodedLengthKnownSequences(t *testing.T) {
	cases := []struct {
		in   []byte
		want int
	}{
		{[]byte{0xED, 0xA0, 0x80}, 9},
		{[]byte{0xC0, 0xAF}, 6},
		{[]byte{0xF4, 0x90, 0x80, 0x80}, 12},
		{[]byte{0xE2, 0x82, 0x0A}, 4},
		{[]byte{0xF0, 0x9F, 0x98, 0x41}, 4},
		{[]byte{0xE2, 0x82, 0xE2, 0x82, 0xAC}, 6},
		{[]byte("h\u00e9\u20ac\U0001F600"), 10},
		{[]byte{0xF0, 0x9F, 0x98}, 3},
		{[]byte{0xFF, 0xFE}, 6},
	}
	for _, c := range cases {
		for chunk := 1; chunk <= 4; chunk++ {
			var d DecodedLength
			got := 0
			for rest := c.in; len(rest) > 0; rest = rest[min(chunk, len(rest)):] {
				got += d.Push(rest[:min(chunk, len(rest))])
			}
			got += d.Flush()
			if got != c.want {
				t.Errorf("% X in chunks of %d: %d; want %d", c.in, chunk, got, c.want)
			}
		}
	}
}

// randomText makes bytes rich in the cases that matter: newlines, byte-order marks, valid and cut multi-byte
// sequences and bytes that are never valid.
func randomText(r *rand.Rand) []byte {
	pieces := [][]byte{
		{0x0A}, {0x0A}, {0xEF, 0xBB, 0xBF}, {'a'}, {'b', 'c'}, {0xC3, 0xA9}, {0xE2, 0x82, 0xAC}, {0xE2, 0x82},
		{0xF0, 0x9F, 0x98, 0x80}, {0xF0, 0x9F}, {0xED, 0xA0, 0x80}, {0xC0}, {0xFF}, {0x80}, {0xF4, 0x90}, {0x0D},
		{0xE0, 0x80}, {0xEF, 0xBB},
	}
	n := r.IntN(14)
	var out []byte
	for range n {
		out = append(out, pieces[r.IntN(len(pieces))]...)
	}
	return out
}

// TestDecodedLengthMatchesXText cross-checks the counter with x/text's UTF-8 decoder, which replaces
// maximal subparts the WHATWG way, over random input split at random points.
func TestDecodedLengthMatchesXText(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		data := randomText(r)
		want, err := unicode.UTF8.NewDecoder().Bytes(data)
		if err != nil {
			t.Fatal(err)
		}
		var d DecodedLength
		got := 0
		for rest := data; len(rest) > 0; {
			n := 1 + r.IntN(len(rest))
			got += d.Push(rest[:n])
			rest = rest[n:]
		}
		got += d.Flush()
		if got != len(want) {
			t.Fatalf("% X: %d; want %d", data, got, len(want))
		}
	}
}

type nodeCase struct {
	Data  []int    `json:"data"`
	Start float64  `json:"start"`
	End   *float64 `json:"end"`
}

// nodeReference computes each scan from its definition with Node's TextDecoder: decode the whole file
// (leading BOM dropped), split on "\n", and measure the selected lines.
const nodeReference = `
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const enc = new TextEncoder();
const out = cases.map(({data, start, end}) => {
  const bytes = Uint8Array.from(data);
  const size = bytes.length;
  const nl = [];
  bytes.forEach((b, i) => { if (b === 10) nl.push(i); });
  const newlines = nl.length;
  const decoded = new TextDecoder().decode(bytes);
  // The counter is a range decoder: it keeps a BOM (ignoreBOM), the scanner skips it itself.
  const length = enc.encode(new TextDecoder("utf-8", {ignoreBOM: true}).decode(bytes)).length;
  if (start > newlines) return {newlines, start: size, end: size, firstLineEnd: size, lastLineStart: size,
    selectedBytes: 0, firstLineBytes: 0, decodedLength: length};
  const lineStart = (k) => (k === 0 ? 0 : nl[k - 1] + 1);
  const lineEnd = (k) => (k < newlines ? nl[k] : size);
  const last = Math.min(end === null ? Infinity : end - 1, newlines);
  const lines = decoded.split("\n");
  return {newlines, start: lineStart(start), end: lineEnd(last), firstLineEnd: lineEnd(start),
    lastLineStart: lineStart(last), selectedBytes: enc.encode(lines.slice(start, last + 1).join("\n")).length,
    firstLineBytes: enc.encode(lines[start]).length, decodedLength: length};
});
process.stdout.write(JSON.stringify(out));
`

type nodeResult struct {
	Result
	DecodedLength int `json:"decodedLength"`
}

// TestAgainstNode compares random scans, fed in chunks of 1 to 5 bytes and in one chunk, with Node's results.
func TestAgainstNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	r := rand.New(rand.NewPCG(7, 11))
	cases := []nodeCase{}
	add := func(data []byte, start float64, endLine *float64) {
		ints := make([]int, len(data))
		for i, b := range data {
			ints[i] = int(b)
		}
		cases = append(cases, nodeCase{Data: ints, Start: start, End: endLine})
	}
	for _, rg := range [][2]float64{{0, -1}, {0, 1}, {1, 3}, {2, 3}, {3, -1}, {4, 9}, {9, -1}} {
		if rg[1] < 0 {
			add(vector, rg[0], nil)
		} else {
			add(vector, rg[0], end(rg[1]))
		}
	}
	for range 600 {
		data := randomText(r)
		start := float64(r.IntN(5))
		if r.IntN(3) == 0 {
			add(data, start, nil)
		} else {
			add(data, start, end(start+1+float64(r.IntN(4))))
		}
	}
	input, _ := json.Marshal(cases)
	cmd := exec.Command(node, "-e", nodeReference)
	cmd.Stdin = bytes.NewReader(input)
	output, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want []nodeResult
	if err := json.Unmarshal(output, &want); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		data := make([]byte, len(c.Data))
		for j, b := range c.Data {
			data[j] = byte(b)
		}
		// Small chunks split every sequence and newline; one chunk of the whole file puts several lines (and a
		// byte-order mark) in one Push, as the agent's 64 KiB reads do.
		for _, chunk := range []int{1, 2, 3, 4, 5, max(len(data), 1)} {
			if got := scanChunked(t, data, c.Start, c.End, chunk); got != want[i].Result {
				t.Fatalf("% X [%v, %v) chunk %d:\n got %+v\nwant %+v", data, c.Start, c.End, chunk, got, want[i].Result)
			}
		}
		var d DecodedLength
		if got := d.Push(data) + d.Flush(); got != want[i].DecodedLength {
			t.Fatalf("% X: decoded length %d; Node %d", data, got, want[i].DecodedLength)
		}
	}
}
