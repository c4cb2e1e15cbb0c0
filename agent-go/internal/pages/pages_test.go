package pages

import (
	"errors"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// sent records the page events a pager emits.
type sent struct {
	events   []map[string]any
	payloads []string
	// raw holds the payloads as given, to catch a pager that reuses their bytes.
	raw [][]byte
}

func (s *sent) Emit(queue proto.Queue, event map[string]any, payload []byte) error {
	if queue != proto.BulkQueue {
		return errors.New("a page went to another queue than the bulk one")
	}
	s.events = append(s.events, event)
	s.payloads = append(s.payloads, string(payload))
	s.raw = append(s.raw, payload)
	return nil
}

func (s *sent) Unsent() int { return 0 }

func newPager(format Format, limit int) (*Pager, *sent, *proto.Call) {
	out := &sent{}
	call := &proto.Call{ID: 1, Op: "test", Control: proto.NewControl(), Events: out}
	return New(call, format, limit), out, call
}

var jsonArray = Format{Open: "[", Separator: ",", Close: "]", MaxItems: 3, MaxBytes: 16}

func TestFramesItemsAndNumbersPagesByTheirFirstItem(t *testing.T) {
	p, out, _ := newPager(jsonArray, 0)
	for _, item := range []string{"1", "22", "333", "4"} {
		if err := p.Add([]byte(item)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(out.payloads, " "); got != "[1,22,333] [4]" {
		t.Fatalf("payloads %q", got)
	}
	if out.events[0]["first"] != 0 || out.events[0]["count"] != 3 || out.events[1]["first"] != 3 ||
		out.events[1]["count"] != 1 || out.events[1]["kind"] != "page" {
		t.Fatalf("events %v", out.events)
	}
	if err := p.Flush(); err != nil || len(out.payloads) != 2 {
		t.Fatalf("an empty page was sent, or failed: %v", err)
	}
}

func TestSendsThePageBeforeAnItemWouldTakeItPastMaxBytes(t *testing.T) {
	p, out, _ := newPager(jsonArray, 0)
	// "[aaaaaa,bbbbbb]" is 15 bytes: fits 16; a third item of 1 byte would make 17.
	for _, item := range []string{"aaaaaa", "bbbbbb", "c", strings.Repeat("d", 40)} {
		if err := p.Add([]byte(item)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	want := []string{"[aaaaaa,bbbbbb]", "[c]", "[" + strings.Repeat("d", 40) + "]"}
	if strings.Join(out.payloads, " ") != strings.Join(want, " ") {
		t.Fatalf("payloads %q, want %q (a larger item gets a page of its own)", out.payloads, want)
	}
}

func TestJoinsStringPartsWithNoFraming(t *testing.T) {
	p, out, _ := newPager(Format{MaxItems: 10, MaxBytes: 100}, 0)
	if err := p.AddStrings("a/b/", "c", "\x00"); err != nil {
		t.Fatal(err)
	}
	if err := p.AddStrings("", "d", "\x00"); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil || out.payloads[0] != "a/b/c\x00d\x00" {
		t.Fatalf("payload %q, %v", out.payloads, err)
	}
}

func TestStopsAtTheLimitAndMarksTruncatedOnlyWhenMoreCame(t *testing.T) {
	p, out, _ := newPager(jsonArray, 2)
	for _, item := range []string{"1", "2"} {
		if err := p.Add([]byte(item)); err != nil {
			t.Fatal(err)
		}
	}
	if p.Truncated {
		t.Fatal("truncated before a third item was offered")
	}
	if err := p.Add([]byte("3")); !errors.Is(err, ErrEnough) || !p.Truncated {
		t.Fatalf("third item: %v, truncated %v", err, p.Truncated)
	}
	if err := p.Flush(); err != nil || out.payloads[0] != "[1,2]" {
		t.Fatalf("payloads %q, %v", out.payloads, err)
	}
}

func TestSendsNothingOnceTheRequestIsAborted(t *testing.T) {
	p, out, call := newPager(jsonArray, 0)
	if err := p.Add([]byte("1")); err != nil {
		t.Fatal(err)
	}
	call.Control.Abort()
	if err := p.Flush(); !errors.Is(err, ErrAborted) || len(out.payloads) != 0 {
		t.Fatalf("flush after abort: %v, sent %q", err, out.payloads)
	}
}

func TestAPageWaitingToBeSentOwnsItsBytes(t *testing.T) {
	p, out, _ := newPager(Format{MaxItems: 1, MaxBytes: 100}, 0)
	for _, item := range []string{"first", "other"} {
		if err := p.Add([]byte(item)); err != nil {
			t.Fatal(err)
		}
	}
	if string(out.raw[0]) != "first" || string(out.raw[1]) != "other" {
		t.Fatalf("payloads %q: a later page overwrote an earlier one", out.raw)
	}
}
