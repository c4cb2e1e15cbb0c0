// Command link is the WAN rig's delay line: it joins two network namespaces by a TUN device in each and forwards
// the IP packets between them in user space, adding a one-way delay, a rate cap (with a router-sized tail-drop
// queue) and random loss, per direction. This machine's kernel has no netem, so the path is built here.
//
//	link -ns-a /run/netns/A -dev-a owan0 -ns-b /run/netns/B -dev-b owan1 -control /tmp/x.sock -profile wan
//
// It prints "ready" once both devices exist and the control socket listens; the caller then gives the devices
// their addresses. The control socket takes one command per line and answers one JSON line:
//
//	profile NAME                      switch to a named profile (lan, wan, far, lossy)
//	set delay=25ms rate=100e6 loss=0.02   set the one-way shape of both directions
//	show                              the current shape and each direction's packet counts
//
// It runs until SIGTERM or SIGINT, or until its parent dies; the devices go away with it.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// profiles are the rig's named paths; Delay is one way, so the round trip is twice it.
var profiles = map[string]Shape{
	"lan":   {Delay: 500 * time.Microsecond, RateBits: 1e9},
	"wan":   {Delay: 25 * time.Millisecond, RateBits: 100e6},
	"far":   {Delay: 75 * time.Millisecond, RateBits: 20e6},
	"lossy": {Delay: 25 * time.Millisecond, RateBits: 100e6, Loss: 0.02},
}

type options struct {
	nsA, devA, nsB, devB, control, profile string
	seed                                   uint64
}

func main() {
	var o options
	flag.StringVar(&o.nsA, "ns-a", "", "network namespace file of side A (e.g. /run/netns/NAME)")
	flag.StringVar(&o.devA, "dev-a", "owan0", "TUN device to create in side A")
	flag.StringVar(&o.nsB, "ns-b", "", "network namespace file of side B")
	flag.StringVar(&o.devB, "dev-b", "owan1", "TUN device to create in side B")
	flag.StringVar(&o.control, "control", "", "path of the control socket to create")
	flag.StringVar(&o.profile, "profile", "lan", "starting profile: lan, wan, far or lossy")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the loss decisions")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "link:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.nsA == "" || o.nsB == "" || o.control == "" {
		return errors.New("-ns-a, -ns-b and -control are required")
	}
	shape, ok := profiles[o.profile]
	if !ok {
		return fmt.Errorf("unknown profile %q", o.profile)
	}
	// A rig whose script was killed must not leave its link behind.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0); err != nil {
		return fmt.Errorf("set parent-death signal: %w", err)
	}
	a, err := openTunIn(o.nsA, o.devA)
	if err != nil {
		return err
	}
	b, err := openTunIn(o.nsB, o.devB)
	if err != nil {
		a.Close()
		return err
	}
	ab := &direction{line: newLine(shape, o.seed)}
	ba := &direction{line: newLine(shape, o.seed+1)}
	state := &linkState{profile: o.profile, ab: ab, ba: ba}

	listener, err := net.Listen("unix", o.control)
	if err != nil {
		a.Close()
		b.Close()
		return fmt.Errorf("control socket: %w", err)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(signals)

	var wg sync.WaitGroup
	errs := make(chan error, 2)
	forward := func(d *direction, src, dst *os.File) {
		defer wg.Done()
		errs <- d.run(src, dst)
	}
	wg.Add(3)
	go forward(ab, a, b)
	go forward(ba, b, a)
	go func() {
		defer wg.Done()
		serveControl(listener, state)
	}()
	fmt.Println("ready")

	var failure error
	select {
	case <-signals:
	case failure = <-errs:
	}
	listener.Close()
	a.Close()
	b.Close()
	wg.Wait()
	return failure
}

// linkState is what the control socket reads and changes.
type linkState struct {
	mu      sync.Mutex
	profile string
	ab, ba  *direction
}

func (s *linkState) apply(name string, shape Shape) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.profile = name
	s.ab.line.setShape(shape)
	s.ba.line.setShape(shape)
}

type shapeJSON struct {
	Profile  string  `json:"profile"`
	DelayMs  float64 `json:"delayMs"`
	RateBits float64 `json:"rateBits"`
	Loss     float64 `json:"loss"`
}

func (s *linkState) show() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	shape := s.ab.line.currentShape()
	return map[string]any{
		"shape": shapeJSON{s.profile, float64(shape.Delay) / float64(time.Millisecond), shape.RateBits, shape.Loss},
		"ab":    s.ab.stats.snapshot(),
		"ba":    s.ba.stats.snapshot(),
	}
}

// serveControl answers control connections one at a time until the listener is closed.
func serveControl(listener net.Listener, state *linkState) {
	for {
		conn, err := listener.Accept()
		if err != nil {
			return
		}
		serveConn(conn, state)
	}
}

func serveConn(conn net.Conn, state *linkState) {
	defer conn.Close()
	// A client that stops talking must not hold the socket (and so shutdown) forever.
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	scanner := bufio.NewScanner(conn)
	encoder := json.NewEncoder(conn)
	for scanner.Scan() {
		reply, err := command(scanner.Text(), state)
		if err != nil {
			reply = map[string]any{"error": err.Error()}
		}
		if encoder.Encode(reply) != nil {
			return
		}
	}
}

func command(line string, state *linkState) (map[string]any, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, errors.New("empty command")
	}
	switch fields[0] {
	case "show":
		return state.show(), nil
	case "profile":
		if len(fields) != 2 {
			return nil, errors.New("usage: profile NAME")
		}
		shape, ok := profiles[fields[1]]
		if !ok {
			return nil, fmt.Errorf("unknown profile %q", fields[1])
		}
		state.apply(fields[1], shape)
		return state.show(), nil
	case "set":
		shape, err := parseShape(state.ab.line.currentShape(), fields[1:])
		if err != nil {
			return nil, err
		}
		state.apply("custom", shape)
		return state.show(), nil
	}
	return nil, fmt.Errorf("unknown command %q", fields[0])
}

// parseShape changes base by key=value fields: delay (a Go duration, one way), rate (bits/s), loss (0 to 1).
func parseShape(base Shape, fields []string) (Shape, error) {
	shape := base
	for _, field := range fields {
		key, value, ok := strings.Cut(field, "=")
		if !ok {
			return base, fmt.Errorf("expected key=value, got %q", field)
		}
		var err error
		switch key {
		case "delay":
			shape.Delay, err = time.ParseDuration(value)
		case "rate":
			shape.RateBits, err = strconv.ParseFloat(value, 64)
		case "loss":
			shape.Loss, err = strconv.ParseFloat(value, 64)
		default:
			err = errors.New("unknown key")
		}
		if err != nil {
			return base, fmt.Errorf("%s: %w", field, err)
		}
	}
	if shape.Delay < 0 || shape.RateBits < 0 || shape.Loss < 0 || shape.Loss > 1 {
		return base, errors.New("delay and rate must be ≥ 0, loss within [0, 1]")
	}
	return shape, nil
}
