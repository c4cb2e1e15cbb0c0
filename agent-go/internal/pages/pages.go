// Package pages streams a bulk result to the client as page events (spec/protocol.md §7.6, §7.7): listFiles' paths
// and searchFiles' matches. Items gather in a page until it holds its most items or the next one would take it past
// its byte bound; each page goes to the bulk queue, so a slow reader holds the producer back, and the result stops
// at its limit, marked truncated once one more item proved there was more.
package pages

import (
	"bytes"
	"errors"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// ErrEnough ends the production once the limit is reached and one more item proved the result truncated.
var ErrEnough = errors.New("limit reached")

// ErrAborted ends the production when the request was aborted before a page could be sent.
var ErrAborted = errors.New("request aborted")

// Format is how a page's items are framed in its payload.
type Format struct {
	// Open precedes the first item, Separator goes between two items, Close follows the last one.
	Open, Separator, Close string
	// MaxItems and MaxBytes bound a page (a single item larger than MaxBytes gets a page of its own).
	MaxItems, MaxBytes int
}

// Pager gathers the items of one request into page events.
type Pager struct {
	call   *proto.Call
	format Format
	limit  int
	total  int
	count  int
	page   bytes.Buffer
	// Truncated says the limit cut the result short.
	Truncated bool
}

// New is a pager for call's result; limit 0 means no limit.
func New(call *proto.Call, format Format, limit int) *Pager {
	return &Pager{call: call, format: format, limit: limit}
}

// Add appends one item, sending the page first if the item would take it past its bounds.
func (p *Pager) Add(item []byte) error {
	if err := p.admit(len(item)); err != nil {
		return err
	}
	p.page.Write(item)
	return p.added()
}

// AddStrings appends one item given in parts, joined (a path's directory and name, with no path built to be copied).
func (p *Pager) AddStrings(parts ...string) error {
	size := 0
	for _, part := range parts {
		size += len(part)
	}
	if err := p.admit(size); err != nil {
		return err
	}
	for _, part := range parts {
		p.page.WriteString(part)
	}
	return p.added()
}

// admit checks the limit, sends the page if an item of size bytes would take it past MaxBytes, and frames the item.
func (p *Pager) admit(size int) error {
	if p.limit > 0 && p.total == p.limit {
		p.Truncated = true
		return ErrEnough
	}
	framing := len(p.format.Separator) + len(p.format.Close)
	if p.count > 0 && p.page.Len()+size+framing > p.format.MaxBytes {
		// Sent first, so a page never holds more than MaxBytes unless one item alone does.
		if err := p.Flush(); err != nil {
			return err
		}
	}
	if p.count == 0 {
		p.page.WriteString(p.format.Open)
	} else {
		p.page.WriteString(p.format.Separator)
	}
	return nil
}

// added counts the item just written, sending the page once it holds MaxItems.
func (p *Pager) added() error {
	p.count++
	p.total++
	if p.count >= p.format.MaxItems {
		return p.Flush()
	}
	return nil
}

// Flush sends the current page, if it holds any item; ErrAborted if the request was aborted.
func (p *Pager) Flush() error {
	if p.count == 0 {
		return nil
	}
	if p.call.Control.Aborted() {
		return ErrAborted
	}
	p.page.WriteString(p.format.Close)
	// A copy of the page's length: what waits in the bulk queue pins no more memory than it sends.
	payload := bytes.Clone(p.page.Bytes())
	count, first := p.count, p.total-p.count
	p.page.Reset()
	p.count = 0
	// `first` also keeps every page's JSON distinct, so the writer never joins two pages into one frame.
	return p.call.Events.Emit(proto.BulkQueue, map[string]any{"kind": "page", "first": first, "count": count}, payload)
}
