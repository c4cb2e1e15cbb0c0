package execop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
	"github.com/outpost-dev/outpost/agent-go/internal/window"
)

// request is a validated exec request.
type request struct {
	// command is set for a shell command; otherwise argv holds the program and its arguments.
	command    *string
	argv       []string
	cwd        string
	env        []envEntry
	inheritEnv bool
	shellPath  string
	// timeout is zero for none.
	timeout time.Duration
	spill   *spillLimits
	window  *window.Limits
}

// envEntry is one variable of the request's env, in the order the request lists them. unset marks a JSON
// null: the variable is removed from the inherited environment, as Node drops keys whose value is undefined
// from `{...process.env, ...shellEnv, ...env}`.
type envEntry struct {
	key, value string
	unset      bool
}

// spillLimits are the thresholds after which the raw output goes to a file. A missing field never triggers
// (in JavaScript, `n > undefined` is false).
type spillLimits struct{ afterBytes, afterLines float64 }

type wireRequest struct {
	Command    *string          `json:"command"`
	Argv       *[]string        `json:"argv"`
	Cwd        *string          `json:"cwd"`
	Env        json.RawMessage  `json:"env"`
	InheritEnv *bool            `json:"inheritEnv"`
	ShellPath  *string          `json:"shellPath"`
	TimeoutMs  *float64         `json:"timeoutMs"`
	Spill      *wireSpill       `json:"spill"`
	Window     *json.RawMessage `json:"window"`
}

type wireSpill struct {
	AfterBytes *float64 `json:"afterBytes"`
	AfterLines *float64 `json:"afterLines"`
}

type wireWindow struct {
	MaxBytes       *float64 `json:"maxBytes"`
	MaxLines       *float64 `json:"maxLines"`
	MinIntervalMs  *float64 `json:"minIntervalMs"`
	BytesPerSecond *float64 `json:"bytesPerSecond"`
}

// parseRequest validates an exec request; every malformed field is an EINVAL failure.
func parseRequest(call *proto.Call) (*request, *proto.Failure) {
	var wire wireRequest
	if len(call.Args) == 0 {
		return nil, proto.Invalid("exec needs command or argv")
	}
	if fail := call.Decode(&wire); fail != nil {
		return nil, fail
	}
	req := &request{inheritEnv: true}
	switch {
	case wire.Command != nil:
		req.command = wire.Command
	case wire.Argv != nil:
		req.argv = *wire.Argv
		if req.argv == nil {
			req.argv = []string{}
		}
	default:
		return nil, proto.Invalid("exec needs command or argv")
	}
	if wire.Cwd == nil {
		return nil, proto.Invalid("exec needs cwd")
	}
	req.cwd = *wire.Cwd
	if wire.InheritEnv != nil {
		req.inheritEnv = *wire.InheritEnv
	}
	if wire.ShellPath != nil {
		req.shellPath = *wire.ShellPath
	}
	env, err := parseEnv(wire.Env)
	if err != nil {
		return nil, proto.Invalid("invalid env for exec: " + err.Error())
	}
	req.env = env
	if wire.TimeoutMs != nil {
		ms := *wire.TimeoutMs
		if !(ms > 0) || math.IsInf(ms, 1) {
			return nil, proto.Invalid(fmt.Sprintf("invalid timeoutMs for exec: %v", ms))
		}
		// Like a Node timer, a delay below 1 ms waits 1 ms; beyond ~292 years is forever.
		req.timeout = time.Millisecond
		if ms > 1 {
			req.timeout = time.Duration(min(ms*float64(time.Millisecond), float64(math.MaxInt64/2)))
		}
	}
	if wire.Spill != nil {
		req.spill = &spillLimits{afterBytes: math.Inf(1), afterLines: math.Inf(1)}
		if wire.Spill.AfterBytes != nil {
			req.spill.afterBytes = *wire.Spill.AfterBytes
		}
		if wire.Spill.AfterLines != nil {
			req.spill.afterLines = *wire.Spill.AfterLines
		}
	}
	if wire.Window != nil {
		limits, err := parseWindow(*wire.Window)
		if err != nil {
			return nil, proto.Invalid("invalid window for exec: " + err.Error())
		}
		req.window = limits
	}
	return req, nil
}

// parseEnv reads the env object keeping its key order; string values are applied, null removes an inherited
// variable, anything else is ignored. A repeated key keeps its first position and its last value, as a
// JavaScript object does.
func parseEnv(raw json.RawMessage) ([]envEntry, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("read env: %w", err)
	}
	if delim, ok := tok.(json.Delim); !ok || delim != '{' {
		return nil, fmt.Errorf("env is not an object")
	}
	var entries []envEntry
	index := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("read env key: %w", err)
		}
		key, _ := tok.(string)
		var value any
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("read env value of %q: %w", key, err)
		}
		text, isString := value.(string)
		if !isString && value != nil {
			continue
		}
		entry := envEntry{key: key, value: text, unset: value == nil}
		if i, seen := index[key]; seen {
			entries[i] = entry
			continue
		}
		index[key] = len(entries)
		entries = append(entries, entry)
	}
	return entries, nil
}

// parseWindow returns the window, or nil when any field is missing (no window then).
func parseWindow(raw json.RawMessage) (*window.Limits, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var wire wireWindow
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, fmt.Errorf("decode window: %w", err)
	}
	if wire.MaxBytes == nil || wire.MaxLines == nil || wire.MinIntervalMs == nil || wire.BytesPerSecond == nil {
		return nil, nil
	}
	interval := math.Min(math.Max(*wire.MinIntervalMs, 0), float64(24*time.Hour/time.Millisecond))
	return &window.Limits{
		MaxBytes:       *wire.MaxBytes,
		MaxLines:       *wire.MaxLines,
		MinInterval:    time.Duration(interval * float64(time.Millisecond)),
		BytesPerSecond: *wire.BytesPerSecond,
	}, nil
}
