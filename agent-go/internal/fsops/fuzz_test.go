//go:build unix

package fsops

import (
	"encoding/json"
	"hash/fnv"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// The fuzz target runs as root in CI, and the file operations do what they are told: rm, rename, mkdir,
// truncate and write on any path. So every path a fuzzed request carries is rewritten to lie inside the
// input's own temporary directory, and a second, independent check (decoding the final JSON exactly as the
// handlers do) refuses to run any request naming a path outside it.

// fuzzPathFields are the request fields the handlers read as paths (mkdtemp's prefix travels as "path").
type fuzzPathFields struct {
	Path *string `json:"path"`
	To   *string `json:"to"`
}

// fuzzRoot makes the directory an input may touch, under t.TempDir().
func fuzzRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir() + "/play"
	for _, system := range []string{"/dev", "/proc", "/sys"} {
		if root == system || strings.HasPrefix(root, system+"/") {
			t.Fatalf("the temporary directory %s lies under %s: refusing to fuzz there", root, system)
		}
	}
	return root
}

// confinePath maps any string to a path under root: its non-empty components other than "." and "..", joined
// below root, keeping a trailing separator (which changes what Node reports). NUL bytes stay: the handlers
// must refuse them before any system call.
func confinePath(root, value string) string {
	var parts []string
	for _, part := range strings.Split(value, "/") {
		if part != "" && part != "." && part != ".." {
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 {
		return root
	}
	path := root + "/" + strings.Join(parts, "/")
	if strings.HasSuffix(value, "/") {
		path += "/"
	}
	return path
}

// confineArgs rewrites a fuzzed request so that it can only name paths under root: in a JSON object every
// string value becomes a confined path, except an open mode of "read". (JSON field names match case-
// insensitively, so every string is rewritten, not just those under "path" and "to".) Whatever comes out is
// checked by insideRoot; the second result is false when the request must not be run at all.
func confineArgs(root string, args []byte) ([]byte, bool) {
	var fields map[string]any
	if err := json.Unmarshal(args, &fields); err == nil && fields != nil {
		for key, value := range fields {
			text, isString := value.(string)
			if isString && !(strings.EqualFold(key, "mode") && text == "read") {
				fields[key] = confinePath(root, text)
			}
		}
		rewritten, err := json.Marshal(fields)
		if err != nil {
			return nil, false
		}
		args = rewritten
	}
	// Not an object (or not decodable as one): it goes as it is, but only if it sets no path field.
	return args, insideRoot(root, args)
}

// insideRoot decodes args as the handlers do (a decode error may still have set a field before it) and
// reports whether every path field it sets lies under root with no ".." component.
func insideRoot(root string, args []byte) bool {
	var probe fuzzPathFields
	_ = json.Unmarshal(args, &probe)
	for _, field := range []*string{probe.Path, probe.To} {
		if field == nil {
			continue
		}
		path := *field
		if path != root && !strings.HasPrefix(path, root+"/") {
			return false
		}
		if slices.Contains(strings.Split(path, "/"), "..") {
			return false
		}
	}
	return true
}

// fuzzSetup gives an input something to work on: files, a directory, and handles 1 (a kept writer), 2 (a
// reader) and 3 (a directory).
func fuzzSetup(t *testing.T, ops *Ops, root string) {
	t.Helper()
	steps := []struct {
		op   string
		args map[string]any
		data string
	}{
		{"mkdir", map[string]any{"path": root + "/d/sub", "recursive": true}, ""},
		{"write", map[string]any{"path": root + "/f", "append": false}, "one\ntwo\r\nthree"},
		{"write", map[string]any{"path": root + "/d/g", "append": false}, "x"},
		{"write", map[string]any{"path": root + "/kept", "append": false, "keep": true}, "start"},
		{"open", map[string]any{"path": root + "/f"}, ""},
		{"opendir", map[string]any{"path": root + "/d"}, ""},
	}
	for _, step := range steps {
		run(t, ops, step.op, step.args, []byte(step.data)).must(t)
	}
}

// checkOutcome asserts what every handler promises: a failure is a *proto.Failure with a code, and a result
// encodes as JSON.
func checkOutcome(t *testing.T, op string, reply proto.Reply, err error) {
	t.Helper()
	if err != nil {
		failure, isFailure := err.(*proto.Failure)
		if !isFailure || failure == nil || failure.Code == "" {
			t.Fatalf("%s failed with %T %v, want a *proto.Failure with a code", op, err, err)
		}
		return
	}
	if _, mErr := json.Marshal(reply.JSON); mErr != nil {
		t.Fatalf("%s result does not encode: %v", op, mErr)
	}
}

// fuzzHandler returns the handler for op; a name that is not an operation picks one by its hash, so junk
// names still reach real code (and appear in its messages).
func fuzzHandler(ops *Ops, op string) proto.Handler {
	handlers := ops.Handlers()
	if handler, found := handlers[op]; found {
		return handler
	}
	names := make([]string, 0, len(handlers))
	for name := range handlers {
		names = append(names, name)
	}
	slices.Sort(names)
	h := fnv.New32a()
	_, _ = h.Write([]byte(op))
	return handlers[names[h.Sum32()%uint32(len(names))]]
}

// fuzzChunk runs WriteChunk and waits for its answer; the returned counter lets the caller check later that
// there was exactly one.
func fuzzChunk(t *testing.T, ops *Ops, call *proto.Call) *atomic.Int32 {
	t.Helper()
	var answers atomic.Int32
	first := make(chan error, 1)
	ops.WriteChunk(call, func(_ proto.Reply, err error) {
		if answers.Add(1) == 1 {
			first <- err
		}
	})
	select {
	case err := <-first:
		checkOutcome(t, "writeChunk", proto.Reply{}, err)
	case <-time.After(5 * time.Second):
		t.Fatal("writeChunk never answered")
	}
	return &answers
}

// FuzzOps feeds random operations, JSON arguments and payloads to the real handlers and to WriteChunk, with
// open handles to hit: nothing may panic, and every failure must be a *proto.Failure with a code.
func FuzzOps(f *testing.F) {
	seeds := []struct{ op, args string }{
		{"lstat", `{"path":"f"}`}, {"lstat", `{"path":"d/"}`}, {"realpath", `{"path":"d/sub/../g"}`},
		{"write", `{"path":"new/x","append":false,"parents":true}`}, {"write", `{"path":"f","append":true,"keep":true}`},
		{"write", `{"path":"f/x","append":false,"parents":false}`}, {"truncate", `{"path":"f","size":3}`},
		{"fsync", `{"path":"d"}`}, {"rename", `{"path":"f","to":"d/moved"}`}, {"rename", `{"path":"d","to":"d/sub/in"}`},
		{"mkdir", `{"path":"a/b","recursive":true}`}, {"mkdir", `{"path":"f/x","recursive":false}`},
		{"rm", `{"path":"d","recursive":true,"force":true}`}, {"rm", `{"path":"nothing","force":false}`},
		{"mkdtemp", `{"path":"tmp-"}`}, {"open", `{"path":"f"}`}, {"open", `{"path":"d","mode":"read"}`},
		{"open", `{"path":"f","noFollow":true}`}, {"open", `{"path":"f","mode":"write"}`},
		{"pread", `{"handle":2,"offset":0,"length":5}`}, {"pread", `{"handle":2,"length":100}`},
		{"pread", `{"handle":3,"length":1}`}, {"fstat", `{"handle":1}`}, {"fstat", `{"handle":3}`},
		{"scanLines", `{"handle":2,"startLine":0,"endLine":2}`}, {"scanLines", `{"handle":2,"startLine":1}`},
		{"opendir", `{"path":"d"}`}, {"readdir", `{"handle":3,"max":1}`}, {"readdir", `{"handle":2}`},
		{"close", `{"handle":3}`}, {"close", `{"handle":4096}`}, {"writeChunk", `{"handle":1}`},
		{"writeChunk", `{"handle":2}`}, {"writeChunk", `{"handle":-1}`},
		// Paths that must never reach the file system as they are.
		{"rm", `{"path":"/dev/null","recursive":true,"force":true}`}, {"mkdir", `{"PATH":"/dev/null","recursive":true}`},
		{"rename", `{"path":"f","To":"../../../../etc/x"}`}, {"write", `{"path":"/etc/passwd","size":1e400}`},
		{"lstat", `{"path":"a\u0000b"}`}, {"nope", `{"path":"f"}`}, {"", `[]`}, {"LSTAT", `null`}, {"lstat", `{`},
	}
	for _, seed := range seeds {
		f.Add(seed.op, []byte(seed.args), []byte("data\n"), false)
	}
	f.Add("scanLines", []byte(`{"handle":2,"startLine":0}`), []byte{}, true)

	f.Fuzz(func(t *testing.T, op string, args []byte, payload []byte, abort bool) {
		root := fuzzRoot(t)
		ops := New()
		defer ops.CloseAll()
		fuzzSetup(t, ops, root)
		confined, safe := confineArgs(root, args)
		if !safe {
			return
		}
		control := proto.NewControl()
		if abort {
			control.Abort()
		}
		call := &proto.Call{ID: 7, Op: op, Args: confined, Payload: payload, Control: control}
		if op != "writeChunk" {
			reply, err := fuzzHandler(ops, op)(call)
			checkOutcome(t, op, reply, err)
			// The same request then goes as a chunk: any handle it names gets the payload.
			call = &proto.Call{ID: 8, Op: "writeChunk", Args: confined, Payload: payload, Control: control}
		}
		answers := fuzzChunk(t, ops, call)
		ops.CloseAll()
		if n := answers.Load(); n != 1 {
			t.Fatalf("writeChunk answered %d times", n)
		}
	})
}

// The confinement itself: hostile requests come out naming only paths under the root, or are refused.
func TestFuzzConfinement(t *testing.T) {
	root := fuzzRoot(t)
	cases := []string{
		`{"path":"/dev/null"}`, `{"PATH":"/dev/null"}`, `{"pAtH":"/dev/null","path":"/dev/null"}`,
		`{"path":"../../.."}`, `{"path":"a/../../b/"}`, `{"to":"/","path":""}`, `{"To":"//etc//x"}`,
		`{"path":"/dev/null","size":1e400}`, `{"path":["/dev/null"]}`, `"/dev/null"`, `{"mode":"read","path":"/"}`,
		`{"mode":"/dev/null"}`, `{"path":"/dev/null"`, `{"\u0070ath":"/dev/null"}`,
	}
	for _, args := range cases {
		out, safe := confineArgs(root, []byte(args))
		if !safe {
			continue
		}
		var probe fuzzPathFields
		_ = json.Unmarshal(out, &probe)
		for _, field := range []*string{probe.Path, probe.To} {
			if field != nil && *field != root && !strings.HasPrefix(*field, root+"/") {
				t.Errorf("%s became %s: names %q outside %s", args, out, *field, root)
			}
			if field != nil && strings.Contains(*field, "..") {
				t.Errorf("%s became %s: %q keeps a parent step", args, out, *field)
			}
		}
	}
	if got := confinePath(root, "/a/./b/../c/"); got != root+"/a/b/c/" {
		t.Errorf("confinePath kept %q", got)
	}
}
