package watch

import (
	"encoding/json"
	"math"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// maxTimerMs is the largest delay a Node timer honours; longer (or below 1 ms) delays behave as 1 ms.
const maxTimerMs = 2_147_483_647

// request is the JSON of a `watch` request.
type request struct {
	Targets []struct {
		Path      *string `json:"path"`
		Recursive any     `json:"recursive"`
		Exclude   struct {
			Hidden any   `json:"hidden"`
			Names  []any `json:"names"`
		} `json:"exclude"`
	} `json:"targets"`
	Mode           any      `json:"mode"`
	PollIntervalMs *float64 `json:"pollIntervalMs"`
	MaxDirectories *float64 `json:"maxDirectories"`
	// NativeWatchLimit is the test hook of Options.NativeLimit.
	NativeWatchLimit *float64 `json:"nativeWatchLimit"`
}

// errNeedsTargets is protocol 1's answer to targets that are not a list of objects with a string path.
var errNeedsTargets = proto.Invalid("watch needs targets")

// parseRequest turns a `watch` request into targets and options.
func parseRequest(call *proto.Call) ([]target, Options, *proto.Failure) {
	var req request
	if len(call.Args) > 0 {
		if err := json.Unmarshal(call.Args, &req); err != nil {
			return nil, Options{}, errNeedsTargets
		}
	}
	if req.Targets == nil {
		return nil, Options{}, errNeedsTargets
	}
	targets := make([]target, 0, len(req.Targets))
	for _, raw := range req.Targets {
		if raw.Path == nil {
			return nil, Options{}, errNeedsTargets
		}
		t := target{path: *raw.Path, recursive: raw.Recursive == true, hidden: raw.Exclude.Hidden == true,
			names: map[string]bool{}}
		for _, name := range raw.Exclude.Names {
			if s, ok := name.(string); ok {
				t.names[s] = true
			}
		}
		targets = append(targets, t)
	}
	opts := Options{PollInterval: DefaultPollInterval, MaxDirectories: DefaultMaxDirectories}
	if mode, ok := req.Mode.(string); ok {
		opts.Mode = mode
	}
	if req.PollIntervalMs != nil {
		opts.PollInterval = nodeTimerDelay(*req.PollIntervalMs)
	}
	if req.MaxDirectories != nil {
		opts.MaxDirectories = budget(*req.MaxDirectories)
	}
	if req.NativeWatchLimit != nil && *req.NativeWatchLimit >= 1 {
		opts.NativeLimit = int(min(*req.NativeWatchLimit, math.MaxInt32))
	}
	return targets, opts, nil
}

// nodeTimerDelay is a poll interval as a Node timer treats it: outside 1..2^31-1 ms it is 1 ms.
func nodeTimerDelay(ms float64) time.Duration {
	if !(ms >= 1 && ms <= maxTimerMs) {
		ms = 1
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// budget is the directory limit as a count compares against it: a fraction allows its whole part (3.5 allows
// 3), and anything below 0 allows nothing.
func budget(limit float64) int64 {
	switch {
	case limit < 0:
		return -1
	case limit > math.MaxInt64/2:
		return math.MaxInt64 / 2
	default:
		return int64(math.Floor(limit))
	}
}
