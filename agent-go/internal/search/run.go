package search

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/outpost-dev/outpost/agent-go/internal/listfiles"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// Sizes of the search (SF16).
const (
	// MaxWorkers bounds the goroutines searching files at once.
	MaxWorkers = 8
	// Ahead bounds the files walked and not yet paged: with one batch each, the results held ahead.
	Ahead = 64
	// batchMatches and batchBytes bound a batch of one file's matches handed to the pager at once.
	batchMatches = 256
	batchBytes   = 64 << 10
)

// source is what a search reads: a directory's walk, or one file.
type source struct {
	root string
	opts listfiles.Options
	// none: the globs select nothing.
	none bool
	// file, when set, is the base name of a root that is a regular file.
	file string
}

// job is one file to search; its matches arrive in batches on results, closed when the file is done.
type job struct {
	abs, rel string
	follow   bool
	results  chan []Match
	// outcome is set before results is closed.
	outcome outcome
}

// search is one run: its stop signal and the goroutines it owns.
type search struct {
	m       *Matcher
	set     Settings
	stop    chan struct{}
	stopped atomic.Bool
	once    sync.Once
}

// halt stops the walk and every searcher.
func (s *search) halt() {
	s.once.Do(func() {
		s.stopped.Store(true)
		close(s.stop)
	})
}

// run searches src, handing matches to deliver in order (SF11). It returns the count of skipped files and
// directories, errStop after an abort, or deliver's error. Every goroutine it starts is joined before it returns.
func run(ctl *proto.Control, src source, m *Matcher, set Settings, deliver func(Match) error) (int64, error) {
	s := &search{m: m, set: set, stop: make(chan struct{})}
	var unreadable atomic.Int64
	src.opts.Unreadable = &unreadable
	jobs := make(chan *job, MaxWorkers)
	order := make(chan *job, Ahead)

	var wg sync.WaitGroup
	finished := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		s.watchAbort(ctl, finished)
	}()
	go func() {
		defer wg.Done()
		defer close(jobs)
		defer close(order)
		s.produce(src, order, jobs)
	}()
	for range min(MaxWorkers, max(2, runtime.NumCPU())) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, BlockSize)
			for j := range jobs {
				s.searchJob(j, buf)
			}
		}()
	}

	var err error
	var count int64
	for j := range order {
		for batch := range j.results {
			for _, match := range batch {
				if err == nil && !s.stopped.Load() {
					err = deliver(match)
				}
			}
			if err != nil || s.stopped.Load() {
				break
			}
		}
		if err != nil || s.stopped.Load() {
			break
		}
		if j.outcome == skipped {
			count++
		}
	}
	aborted := s.stopped.Load()
	s.halt()
	close(finished)
	wg.Wait()
	if err == nil && aborted {
		err = errStop
	}
	return count + unreadable.Load(), err
}

// watchAbort halts the search when the control is aborted, or returns when finished closes.
func (s *search) watchAbort(ctl *proto.Control, finished chan struct{}) {
	for {
		changed := ctl.Changed()
		if ctl.Aborted() {
			s.halt()
			return
		}
		select {
		case <-changed:
		case <-finished:
			return
		}
	}
}

// produce walks the source, queueing each file for the searchers and, in the same order, for the pager.
func (s *search) produce(src source, order, jobs chan<- *job) {
	send := func(j *job) error {
		select {
		case order <- j:
		case <-s.stop:
			return errStop
		}
		select {
		case jobs <- j:
			return nil
		case <-s.stop:
			// Queued for the pager but never searched: close it so nothing waits for it.
			j.outcome = stopped
			close(j.results)
			return errStop
		}
	}
	if src.file != "" {
		_ = send(&job{abs: src.root, rel: src.file, follow: true, results: make(chan []Match, 1)})
		return
	}
	if src.none {
		return
	}
	_ = listfiles.Walk(src.root, src.opts, s.stop, func(dir, name string) error {
		rel := dir + name
		display := rel
		if !utf8.ValidString(rel) {
			display = listfiles.DecodeName(rel)
		}
		return send(&job{abs: filepath.Join(src.root, rel), rel: display, results: make(chan []Match, 1)})
	})
}

// searchJob searches one file, handing its matches on in batches, and closes its results.
func (s *search) searchJob(j *job, buf []byte) {
	defer close(j.results)
	if s.stopped.Load() {
		j.outcome = stopped
		return
	}
	open := listfiles.OpenNoFollow
	if j.follow {
		open = os.Open
	}
	f, err := open(j.abs)
	if err != nil {
		j.outcome = skipped
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		// Replaced since the walk saw a file (by a FIFO, a directory): not searched, as the walk would skip it.
		j.outcome = searched
		return
	}
	var batch []Match
	size := 0
	send := func() error {
		select {
		case j.results <- batch:
			batch, size = nil, 0
			return nil
		case <-s.stop:
			return errStop
		}
	}
	j.outcome = searchFile(f, info.Size(), buf, j.rel, s.m, s.set, &s.stopped, func(m Match) error {
		batch = append(batch, m)
		size += len(m.Text)
		for _, line := range m.Before {
			size += len(line)
		}
		for _, line := range m.After {
			size += len(line)
		}
		if len(batch) >= batchMatches || size >= batchBytes {
			return send()
		}
		return nil
	})
	if len(batch) > 0 && j.outcome != stopped {
		if send() != nil {
			j.outcome = stopped
		}
	}
}
