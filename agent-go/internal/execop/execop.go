// Package execop runs the `exec` operation: one command per request, in a process group of its own, with its
// output decoded and streamed as events, optionally spilled to a file and windowed, and its end reported the
// way Durable's NodeExecutionEnv reports it.
//
// A request goes down the files once: request.go parses it; plan.go decides everything about the process (shell
// or argv, working directory, environment, Node's argument checks, program search; the platform's rules in
// plan_<os>.go), looking at the machine only through machine.go; spawn_<os>.go starts the plan; Handle and
// supervise (here) run it to its end, with output.go, spill.go and the window delivering what it prints.
package execop

import (
	"os"
	"sync"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"github.com/outpost-dev/outpost/agent-go/internal/reaper"
)

// exitStdioGrace is how long output may stay silent after the process exited before the pipes are abandoned
// (a background descendant may hold them open forever).
const exitStdioGrace = 100 * time.Millisecond

// unsentPoll is how often a windowed command checks whether its last output frame was written.
const unsentPoll = 20 * time.Millisecond

// readBuffer is the size of one read from a pipe (Node reads up to 64 KiB).
const readBuffer = 64 << 10

// Runner runs exec requests and remembers the process groups still running.
type Runner struct {
	tmpdir string

	mu      sync.Mutex
	running map[*child]*lifetime
	// settled are the lifetimes of the commands that ended, for telling whose an orphan is.
	settled []lifetime
	// closed is set by KillAll: a command that starts afterwards is killed as soon as it exists.
	closed bool

	platform platformState
}

// New returns a runner whose spill files go under tmpdir (the machine's Node os.tmpdir()).
func New(tmpdir string) *Runner {
	if tmpdir == "" {
		tmpdir = os.TempDir()
	}
	return &Runner{tmpdir: tmpdir, running: map[*child]*lifetime{}}
}

// lifetime is when a command ran, in reaper.Ticks (end is 0 while it runs).
type lifetime struct{ start, end uint64 }

// maxSettled bounds the remembered lifetimes; an orphan older than all of them is nobody's.
const maxSettled = 4096

// covers reports whether the command was running at ticks.
func (l *lifetime) covers(ticks uint64) bool {
	return l.start <= ticks && (l.end == 0 || ticks <= l.end)
}

// KillAll kills every command still running (the connection ended) and closes the runner: a command being
// spawned right now is killed as soon as it exists, and no later request spawns at all. The commands then
// settle on their own with the killed status.
func (r *Runner) KillAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for c := range r.running {
		c.killTree()
	}
	// Orphans of every command, settled or not (on Linux, where the agent is their subreaper).
	reaper.Sweep(func(uint64) bool { return true })
}

// isClosed reports whether KillAll ran.
func (r *Runner) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// track records a started command. The closed check shares KillAll's lock, so a command spawned while KillAll
// runs is either seen by KillAll or killed here.
func (r *Runner) track(c *child) {
	start, _ := reaper.StartTicks(c.pid)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running[c] = &lifetime{start: start}
	if r.closed {
		c.killTree()
	}
}

// untrack forgets a settled command; after it returns KillAll no longer touches its (soon reaped) pid. When
// the command was killed (timeout, abort, kill), its descendants that escaped its process group die too: on
// Linux they were re-parented to the agent, and an adopted process is the command's when the command is the
// only one, running or settled, that was running when the process started. Every settle also reaps the
// adopted processes that exited.
func (r *Runner) untrack(c *child, killed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	own := r.running[c]
	delete(r.running, c)
	if own == nil {
		return
	}
	own.end = max(reaper.Ticks(), own.start)
	reaper.Sweep(func(start uint64) bool {
		return r.closed || killed && own.covers(start) && r.onlyCovering(own, start)
	})
	if len(r.settled) == maxSettled {
		r.settled = append(r.settled[:0], r.settled[1:]...)
	}
	r.settled = append(r.settled, *own)
}

// onlyCovering reports whether no command but own (running or settled) was running at ticks. r.mu is held.
func (r *Runner) onlyCovering(own *lifetime, ticks uint64) bool {
	for _, l := range r.running {
		if l.covers(ticks) {
			return false
		}
	}
	for i := range r.settled {
		if r.settled[i].covers(ticks) {
			return false
		}
	}
	return own.start != 0
}

// Handle runs one exec request to its end. The reply is the bulk-queued result {exitCode, spillPath?}; errors
// are *proto.Failure values with the codes the client maps (timeout, aborted, shell_unavailable, spawn_error,
// unknown, EINVAL).
func (r *Runner) Handle(call *proto.Call) (proto.Reply, error) {
	req, fail := parseRequest(call)
	// The request frame is not needed once parsed: a command may run for hours.
	call.Release()
	if fail != nil {
		return proto.Reply{}, fail
	}
	control := call.Control
	if control == nil {
		control = proto.NewControl()
	}
	// A cancel that arrived before the request attached: never spawn.
	if control.Aborted() {
		return proto.Reply{}, proto.Aborted("aborted")
	}
	if r.isClosed() {
		return proto.Reply{}, &proto.Failure{Code: "spawn_error", Message: "the agent is shutting down"}
	}
	plan, fail := planExec(req, hostMachine())
	if fail != nil {
		return proto.Reply{}, fail
	}
	c, fail := r.spawn(plan)
	if fail != nil {
		return proto.Reply{}, fail
	}
	r.track(c)
	run := &command{
		runner:  r,
		child:   c,
		control: control,
		out:     newOutput(call.Events, req, r.tmpdir),
		timeout: req.timeout,
	}
	return run.supervise()
}

// command is one running exec.
type command struct {
	runner  *Runner
	child   *child
	control *proto.Control
	out     *output
	timeout time.Duration

	timedOut bool
	aborted  bool
	// killed is set once the command's group was killed (timeout, abort, kill, spill failure).
	killed bool
}

// kill kills the command's process group.
func (c *command) kill() {
	c.killed = true
	c.child.killTree()
}

// supervise waits for the process and its output, enforcing timeout, abort and kill, and builds the result.
func (c *command) supervise() (proto.Reply, error) {
	start := time.Now()
	var deadline <-chan time.Time
	if c.timeout > 0 {
		timer := time.NewTimer(c.timeout)
		defer timer.Stop()
		deadline = timer.C
	}

	activity := make(chan struct{}, 1)
	readersDone := make(chan struct{}, 2)
	stopReading := c.readOutput(activity, readersDone)
	exitedCh := make(chan struct{})
	go func() {
		c.child.waitExit()
		close(exitedCh)
	}()
	exited := (<-chan struct{})(exitedCh)
	outputFailed := c.out.failed()
	stopPacer := c.out.startPacer()

	// A kill or abort that arrived between attaching and spawning acts now.
	changed := c.control.Changed()
	c.checkControl()

	idle := time.NewTimer(time.Hour)
	idle.Stop()
	defer idle.Stop()
	hasExited, ended := false, 0
	for done := false; !done; {
		select {
		case <-exited:
			exited, hasExited = nil, true
			if ended == 2 {
				done = true
			} else {
				idle.Reset(exitStdioGrace)
			}
		case <-readersDone:
			ended++
			if hasExited && ended == 2 {
				done = true
			}
		case <-activity:
			if hasExited {
				idle.Reset(exitStdioGrace)
			}
		case <-changed:
			changed = c.control.Changed()
			c.checkControl()
		case <-deadline:
			deadline = nil
			c.timedOut = true
			c.kill()
		case <-outputFailed:
			outputFailed = nil
			c.kill()
		case <-idle.C:
			done = true
		}
	}

	// Settle: no output after this point, pipes closed even if a descendant holds them, readers finished.
	c.out.stop()
	stopReading()
	stopPacer()
	spillErr := c.out.finish()

	// Timeout and abort stay armed until the result is built, and still kill what is left of the group
	// (the exited leader is not reaped yet, so its pid cannot name another group).
	if !c.timedOut && c.timeout > 0 && time.Since(start) >= c.timeout {
		c.timedOut = true
		c.kill()
	}
	if !c.aborted && c.control.Aborted() {
		c.aborted = true
		c.kill()
	}
	c.runner.untrack(c.child, c.killed)
	return c.result(c.child.exitCode(), spillErr)
}

// checkControl applies the cancel flags: abort marks the command aborted and kills it, kill only kills.
func (c *command) checkControl() {
	if c.control.Aborted() && !c.aborted {
		c.aborted = true
		c.kill()
	}
	if c.control.Killed() {
		c.kill()
	}
}

// result applies the agent's precedence: timeout, abort, spill failure, delivery failure, then the exit code.
func (c *command) result(exitCode int, spillErr error) (proto.Reply, error) {
	spillPath := c.out.spillPath()
	withPath := func(f *proto.Failure) *proto.Failure {
		if spillPath != "" {
			f.Extra = map[string]any{"spillPath": spillPath}
		}
		return f
	}
	switch {
	case c.timedOut:
		return proto.Reply{}, withPath(&proto.Failure{Code: "timeout", Message: "timeout"})
	case c.aborted:
		return proto.Reply{}, withPath(proto.Aborted("aborted"))
	case spillErr != nil:
		return proto.Reply{}, &proto.Failure{Code: "unknown", Message: "Failed to preserve complete shell output: " + spillErr.Error()}
	case c.out.deliveryErr != nil:
		return proto.Reply{}, &proto.Failure{Code: "unknown", Message: "Failed to deliver shell output: " + c.out.deliveryErr.Error()}
	}
	result := map[string]any{"exitCode": exitCode}
	if spillPath != "" {
		result["spillPath"] = spillPath
	}
	return proto.Reply{JSON: result, Bulk: true}, nil
}

// signal wakes the command loop without ever blocking (one pending wake-up is enough).
func signal(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
