package window

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestTakeWithoutOmissionKeepsStreamsApart(t *testing.T) {
	w := New(Limits{MaxBytes: 100, MaxLines: 10, MinInterval: time.Millisecond, BytesPerSecond: 1000})
	w.Push("stdout", []byte("a"))
	w.Push("stdout", []byte("b"))
	w.Push("stderr", []byte("c"))
	w.Push("stdout", []byte("d"))
	got := w.Take()
	want := []Delivery{{Stream: "stdout", Text: []byte("ab")}, {Stream: "stderr", Text: []byte("c")},
		{Stream: "stdout", Text: []byte("d")}}
	if len(got) != len(want) {
		t.Fatalf("got %d deliveries, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Stream != want[i].Stream || string(got[i].Text) != string(want[i].Text) || got[i].Skipped != nil {
			t.Fatalf("delivery %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if !w.Empty() || w.Take() != nil {
		t.Fatal("window not empty after Take")
	}
}

func TestOmissionByBytesAndLines(t *testing.T) {
	cases := []struct {
		name     string
		limits   Limits
		pushes   []string
		wantText string
		wantSkip Skip
	}{
		{"bytes", Limits{MaxBytes: 3, MaxLines: 100}, []string{"abcdefgh"}, "efgh", Skip{Bytes: 4}},
		{"exactly the window is kept whole", Limits{MaxBytes: 4, MaxLines: 100}, []string{"abcd"}, "abcd", Skip{}},
		{"lines", Limits{MaxBytes: 1000, MaxLines: 1}, []string{"a\nb\nc\n"}, "\nc\n", Skip{Bytes: 3, Newlines: 1}},
		{"lines, omission ends with newline", Limits{MaxBytes: 1000, MaxLines: 0}, []string{"a\n\nb"}, "\nb",
			Skip{Bytes: 2, Newlines: 1, EndsWithNewline: true}},
		{"longer cut wins", Limits{MaxBytes: 2, MaxLines: 0}, []string{"x\nabcdef"}, "def", Skip{Bytes: 5, Newlines: 1}},
		{"character boundary", Limits{MaxBytes: 2, MaxLines: 100}, []string{"ab€"}, "€", Skip{Bytes: 2}},
		{"replacement counts three bytes", Limits{MaxBytes: 0, MaxLines: 100}, []string{"\uFFFD\uFFFD"}, "\uFFFD",
			Skip{Bytes: 3}},
		{"across streams", Limits{MaxBytes: 3, MaxLines: 100}, []string{"out:abc", "err:de"}, "bcde", Skip{Bytes: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := New(c.limits)
			for _, p := range c.pushes {
				stream, text := "stdout", p
				if s, rest, ok := strings.Cut(p, ":"); ok && (s == "out" || s == "err") {
					stream, text = map[string]string{"out": "stdout", "err": "stderr"}[s], rest
				}
				w.Push(stream, []byte(text))
			}
			got := w.Take()
			var text []byte
			var skip Skip
			for i, d := range got {
				text = append(text, d.Text...)
				if d.Skipped != nil {
					skip = *d.Skipped
					if i != 0 {
						t.Fatalf("only the first delivery of a Take may carry a skip, got one on delivery %d", i)
					}
				}
			}
			if string(text) != c.wantText || skip != c.wantSkip {
				t.Fatalf("got %q %+v, want %q %+v", text, skip, c.wantText, c.wantSkip)
			}
		})
	}
}

func TestPause(t *testing.T) {
	w := New(Limits{MaxBytes: 1000, MaxLines: 20, MinInterval: 20 * time.Millisecond, BytesPerSecond: 10_000})
	cases := []struct {
		delivered int
		want      time.Duration
	}{
		{0, 20 * time.Millisecond},
		{100, 20 * time.Millisecond},
		{500, 50 * time.Millisecond},
		{1_000_000, 100 * time.Millisecond}, // only the kept 1000 bytes count
	}
	for _, c := range cases {
		if got := w.Pause(c.delivered); got != c.want {
			t.Errorf("Pause(%d) = %v, want %v", c.delivered, got, c.want)
		}
	}
	slow := New(Limits{MaxBytes: 10, MaxLines: 1, MinInterval: -time.Second, BytesPerSecond: 0})
	if got := slow.Pause(5); got != 5*time.Second {
		t.Errorf("rate floored at 1 B/s: Pause(5) = %v", got)
	}
}

// TestRandomAgainstCaller replays random output through the window and checks every rule the caller relies on:
// omissions are contiguous and counted exactly, a delivery after an omission holds all later text and more
// than the window, streams are named right, and the caller's kept tail equals the tail of the full output.
func TestRandomAgainstCaller(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", "bc", "\n", "\n\n", "€", "😀", "\uFFFD", "xyz\n", "long line without newline "}
	for round := range 200 {
		limits := Limits{MaxBytes: float64(rng.IntN(40)), MaxLines: float64(rng.IntN(6)), BytesPerSecond: 1}
		if round%5 == 0 {
			limits.MaxBytes += 0.5
		}
		w := New(limits)
		var full bytes.Buffer
		var streams []string // stream of every byte of full
		var got [][]Delivery
		for range rng.IntN(200) {
			stream := []string{"stdout", "stderr"}[rng.IntN(2)]
			var text strings.Builder
			for range 1 + rng.IntN(30) {
				text.WriteString(pieces[rng.IntN(len(pieces))])
			}
			w.Push(stream, []byte(text.String()))
			full.WriteString(text.String())
			for range text.Len() {
				streams = append(streams, stream)
			}
			if rng.IntN(8) == 0 {
				got = append(got, w.Take())
			}
		}
		got = append(got, w.Take())
		checkDeliveries(t, limits, full.Bytes(), streams, got)
	}
}

// checkDeliveries checks the deliveries of a run, Take by Take, against the full output: every byte is either
// delivered or counted in a skip, in order (delivered + skipped = produced), and a caller keeping the window's
// tail ends with the tail of the full output.
func checkDeliveries(t *testing.T, limits Limits, full []byte, streams []string, takes [][]Delivery) {
	t.Helper()
	cursor := 0
	var kept []byte // what a tail-keeping caller ends with (before cutting to the window)
	for _, got := range takes {
		var skipped *Skip
		var after []byte // the text of this Take after its omission
		for i, d := range got {
			if len(d.Text) == 0 || len(d.Text) > MaxPiece {
				t.Fatalf("delivery of %d bytes (at most %d)", len(d.Text), MaxPiece)
			}
			if d.Skipped != nil {
				if i != 0 {
					t.Fatalf("skip on delivery %d of a Take", i)
				}
				omitted := full[cursor : cursor+int(d.Skipped.Bytes)]
				if d.Skipped.Bytes == 0 || int64(bytes.Count(omitted, []byte{'\n'})) != d.Skipped.Newlines ||
					d.Skipped.EndsWithNewline != (omitted[len(omitted)-1] == '\n') {
					t.Fatalf("skip %+v does not describe %q", *d.Skipped, omitted)
				}
				cursor += len(omitted)
				kept = nil
				skipped = d.Skipped
			}
			if skipped == nil {
				for i := range d.Text {
					if streams[cursor+i] != d.Stream {
						t.Fatalf("delivery of %s holds %s text", d.Stream, streams[cursor+i])
					}
				}
			}
			if !bytes.Equal(full[cursor:cursor+len(d.Text)], d.Text) {
				t.Fatalf("delivered %q, want %q", d.Text, full[cursor:cursor+len(d.Text)])
			}
			cursor += len(d.Text)
			kept = append(kept, d.Text...)
			after = append(after, d.Text...)
		}
		if skipped != nil {
			if !(float64(len(after)) > limits.MaxBytes || float64(bytes.Count(after, []byte{'\n'})) > limits.MaxLines) {
				t.Fatalf("text after an omission is within the window: %q (limits %+v)", after, limits)
			}
			for _, d := range got {
				if d.Stream != streams[cursor-1] {
					t.Fatalf("stream %s after an omission, want the last stream %s", d.Stream, streams[cursor-1])
				}
			}
		}
	}
	if cursor != len(full) {
		t.Fatalf("delivered and omitted %d bytes of %d", cursor, len(full))
	}
	if a, b := tail(kept, limits), tail(full, limits); a != b {
		t.Fatalf("caller keeps %q, full output's tail is %q", a, b)
	}
}

// tail is the part of text a caller keeping the window can still show: at most the last MaxBytes bytes, and
// nothing before the newline that leaves MaxLines+1 newlines.
func tail(text []byte, limits Limits) string {
	start := max(0, len(text)-int(limits.MaxBytes))
	newlines := 0
	for i := len(text) - 1; i >= 0; i-- {
		if text[i] == '\n' {
			newlines++
			if newlines == int(limits.MaxLines)+1 {
				start = max(start, i)
				break
			}
		}
	}
	return string(text[start:])
}

func TestMemoryStaysNearTheWindow(t *testing.T) {
	w := New(Limits{MaxBytes: 1000, MaxLines: 20, BytesPerSecond: 1})
	chunk := bytes.Repeat([]byte("y\n"), 32<<10)
	for range 100 {
		w.Push("stdout", chunk)
		if w.Held() > 2*1001+64<<10 {
			t.Fatalf("holding %d bytes, above the cap", w.Held())
		}
	}
	got := w.Take()
	if len(got) != 1 || got[0].Skipped == nil || got[0].Skipped.Bytes+int64(len(got[0].Text)) != 100*int64(len(chunk)) {
		t.Fatalf("unexpected deliveries %+v", got)
	}
	if string(got[0].Text) != strings.Repeat("\ny", 20)+"\n" {
		t.Fatalf("kept %q", got[0].Text)
	}
}

// TestLargeWindowDeliversInPiecesThatFitAFrame is issue 8's case: with a window larger than a frame (20 MB of
// 40 MB), the held text used to go out as one delivery over the 16 MiB frame limit, which failed and lost the
// output. Now every delivery is at most MaxPiece and they add up.
func TestLargeWindowDeliversInPiecesThatFitAFrame(t *testing.T) {
	for _, pushSize := range []int{64 << 10, 40_000_000} {
		w := New(Limits{MaxBytes: 20_000_000, MaxLines: 1e12, BytesPerSecond: 1})
		text := bytes.Repeat([]byte("x€"), pushSize/4)
		produced := 0
		for produced < 40_000_000 {
			w.Push("stdout", text)
			produced += len(text)
			if w.Held() > 2*20_000_001+64<<10 {
				t.Fatalf("holding %d bytes, above the cap", w.Held())
			}
		}
		got := w.Take()
		delivered, skipped := 0, int64(0)
		for i, d := range got {
			if len(d.Text) > MaxPiece || !utf8.Valid(d.Text) {
				t.Fatalf("delivery %d: %d bytes, valid UTF-8 %v", i, len(d.Text), utf8.Valid(d.Text))
			}
			if d.Skipped != nil {
				skipped += d.Skipped.Bytes
			}
			delivered += len(d.Text)
		}
		if int64(delivered)+skipped != int64(produced) || delivered <= 20_000_000 {
			t.Fatalf("push %d: delivered %d + skipped %d != produced %d", pushSize, delivered, skipped, produced)
		}
	}
}

// TestRandomLargePushes is the window invariant as a property over large, multi-byte pushes and any window:
// pieces split at character boundaries, the cap holds after every push, delivered + skipped = produced.
func TestRandomLargePushes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "\n", "€", "😀", "\uFFFD"}
	for range 60 {
		limits := Limits{MaxBytes: float64(rng.IntN(300_000)), MaxLines: float64(rng.IntN(50_000)), BytesPerSecond: 1}
		w := New(limits)
		var full bytes.Buffer
		var streams []string
		var takes [][]Delivery
		for range 1 + rng.IntN(12) {
			stream := []string{"stdout", "stderr"}[rng.IntN(2)]
			var text strings.Builder
			for text.Len() < rng.IntN(200_000) {
				text.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			w.Push(stream, []byte(text.String()))
			full.WriteString(text.String())
			for range text.Len() {
				streams = append(streams, stream)
			}
			if w.Held() > w.capBytes() || w.newlines > w.capLines() {
				t.Fatalf("holding %d bytes, %d newlines over the cap", w.Held(), w.newlines)
			}
			if rng.IntN(3) == 0 {
				takes = append(takes, w.Take())
			}
		}
		takes = append(takes, w.Take())
		checkDeliveries(t, limits, full.Bytes(), streams, takes)
	}
}
