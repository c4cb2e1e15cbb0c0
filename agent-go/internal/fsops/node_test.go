//go:build linux

package fsops

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// nodeRunner performs each scenario with Node's fs.promises the way NodeExecutionEnv does and reports
// {ok, kind?, path?, bytes?} or {code, syscall?, path?}.
const nodeRunner = `
const fs = require("fs/promises");
const { constants } = require("fs");
const path = require("path");
const kind = (s) => s.isFile() ? "file" : s.isDirectory() ? "directory" : s.isSymbolicLink() ? "symlink" : "other";
async function run({ op, args }) {
  switch (op) {
    case "lstat": return { kind: kind(await fs.lstat(args.path)) };
    case "realpath": return { path: await fs.realpath(args.path) };
    case "write": {
      if (args.parents !== false) await fs.mkdir(path.dirname(args.path), { recursive: true });
      const data = Buffer.from(args.data);
      if (args.append) await fs.appendFile(args.path, data); else await fs.writeFile(args.path, data);
      return {};
    }
    case "truncate": { const h = await fs.open(args.path, "r+"); try { await h.truncate(args.size); } finally { await h.close(); } return {}; }
    case "fsync": { const h = await fs.open(args.path, "r+"); try { await h.sync(); } finally { await h.close(); } return {}; }
    case "rename": await fs.rename(args.path, args.to); return {};
    case "mkdir": await fs.mkdir(args.path, { recursive: args.recursive }); return {};
    case "rm": await fs.rm(args.path, { recursive: args.recursive, force: args.force }); return {};
    case "mkdtemp": return { path: await fs.mkdtemp(args.path) };
    case "opendir": { const d = await fs.opendir(args.path); await d.close(); return {}; }
    case "openRead": {
      const h = await fs.open(args.path, "r");
      try { return { bytes: (await h.read(Buffer.alloc(64), 0, 64, null)).bytesRead }; } finally { await h.close(); }
    }
    case "open": {
      // NodeExecutionEnv.openBinaryReader on POSIX.
      let h;
      try {
        h = await fs.open(args.path, constants.O_RDONLY | constants.O_NONBLOCK | (args.noFollow ? constants.O_NOFOLLOW : 0));
      } catch (e) {
        if (args.noFollow && (e.code === "ELOOP" || e.code === "EMLINK")) return { code: "SYMLINK", path: args.path };
        throw e;
      }
      try {
        const s = await h.stat();
        if (s.isDirectory()) return { code: "EISDIR", syscall: "read", path: args.path };
        if (!s.isFile()) return { code: "NOT_REGULAR", path: args.path };
        return {};
      } finally { await h.close(); }
    }
  }
  throw new Error("unknown op " + op);
}
(async () => {
  const scenarios = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const out = [];
  for (const s of scenarios) {
    try { out.push(await run(s)); } catch (e) { out.push({ code: e.code, syscall: e.syscall, path: e.path }); }
  }
  process.stdout.write(JSON.stringify(out));
})();
`

type scenario struct {
	Op   string         `json:"op"`
	Args map[string]any `json:"args"`
}

// scenarios lists the calls compared with Node; "@" stands for the scenario's root directory.
func scenarios() []scenario {
	s := func(op string, args ...any) scenario {
		m := map[string]any{}
		for i := 0; i+1 < len(args); i += 2 {
			m[args[i].(string)] = args[i+1]
		}
		return scenario{Op: op, Args: m}
	}
	var out []scenario
	for _, p := range []string{"file", "dir", "missing", "file/x", "dangling", "loop", "fifo", "dirlink", "loop/x"} {
		out = append(out, s("lstat", "path", "@/"+p))
	}
	for _, p := range []string{"file", "dirlink/inner.txt", "missing", "dangling", "loop", "file/x", "dir/../file", "dirlink/../file", "filelink"} {
		out = append(out, s("realpath", "path", "@/"+p))
	}
	for _, p := range []string{"file", "file/a/b", "dangling", "dangling/y", "dangling/y/z", "loop", "loop/a", "dir", "new/a/b", "dir/inner.txt/x", "dirlink", "filelink", "fifo"} {
		out = append(out, s("mkdir", "path", "@/"+p, "recursive", true))
	}
	for _, p := range []string{"dir", "missing/x", "dangling", "new", "file/x", "loop"} {
		out = append(out, s("mkdir", "path", "@/"+p, "recursive", false))
	}
	for _, p := range []string{"file", "dir", "missing/deep/f", "file/x", "file/a/b", "dangling/f", "dangling/y/f", "dirlink/new", "filelink", "dangling", "loop/f", "new"} {
		out = append(out, s("write", "path", "@/"+p, "data", "data", "append", false))
		out = append(out, s("write", "path", "@/"+p, "data", "more", "append", true))
	}
	out = append(out, s("write", "path", "@/missing/f", "data", "x", "append", false, "parents", false))
	out = append(out, s("write", "path", "@/dir/f", "data", "x", "append", false, "parents", false))
	for _, p := range []string{"file", "dir", "missing", "fifo", "dangling", "file/x"} {
		out = append(out, s("truncate", "path", "@/"+p, "size", 3))
		out = append(out, s("fsync", "path", "@/"+p))
	}
	for _, pair := range [][2]string{{"file", "renamed"}, {"missing", "x"}, {"dir", "emptydir"}, {"emptydir", "dir"},
		{"file", "dir"}, {"dir", "file"}, {"dir", "dir/sub"}, {"file", "missing/x"}, {"dangling", "moved"}, {"file", "file"}} {
		out = append(out, s("rename", "path", "@/"+pair[0], "to", "@/"+pair[1]))
	}
	for _, p := range []string{"file", "missing", "dir", "dirlink", "file/x", "dangling", "fifo", "loop", "emptydir"} {
		for _, mode := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			out = append(out, s("rm", "path", "@/"+p, "recursive", mode[0], "force", mode[1]))
		}
	}
	for _, p := range []string{"missing/x-", "file/x-", "dir/t-", "@"} {
		out = append(out, s("mkdtemp", "path", "@/"+strings.TrimPrefix(p, "@")))
	}
	for _, p := range []string{"file", "missing", "dir", "fifo", "dirlink", "dangling", "loop", "file/x"} {
		out = append(out, s("opendir", "path", "@/"+p))
	}
	for _, p := range []string{"dir", "missing", "file", "dangling", "loop", "dirlink", "filelink"} {
		out = append(out, s("openRead", "path", "@/"+p))
	}
	for _, p := range []string{"file", "dir", "fifo", "filelink", "dirlink", "dirlink/inner.txt", "dangling", "loop", "missing", "file/x"} {
		out = append(out, s("open", "path", "@/"+p, "noFollow", true))
		out = append(out, s("open", "path", "@/"+p, "noFollow", false))
	}
	return out
}

func withRoot(args map[string]any, root string) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		if str, isString := v.(string); isString && strings.HasPrefix(str, "@") {
			v = root + strings.TrimPrefix(str, "@")
		}
		out[k] = v
	}
	return out
}

var tempSuffix = regexp.MustCompile(`[A-Za-z0-9]{6}$`)

// normalise turns an outcome into a comparable string: root replaced by "@", mkdtemp suffixes masked.
func normalise(op string, outcome map[string]any, root string) string {
	clean := map[string]any{}
	for k, v := range outcome {
		if str, isString := v.(string); isString {
			str = strings.ReplaceAll(str, root, "@")
			if op == "mkdtemp" && k == "path" {
				str = tempSuffix.ReplaceAllString(str, "XXXXXX")
			}
			v = str
		}
		if v == nil {
			continue
		}
		clean[k] = v
	}
	b, _ := json.Marshal(clean)
	return string(b)
}

// ours runs a scenario against the agent's operations and reports it like the Node runner does.
func ours(t *testing.T, sc scenario, root string) map[string]any {
	ops := New()
	defer ops.CloseAll()
	args := withRoot(sc.Args, root)
	outcome := func(r result, keep ...string) map[string]any {
		if r.failure != nil {
			out := map[string]any{"code": r.failure.Code}
			if r.failure.Syscall != "" {
				out["syscall"] = r.failure.Syscall
			}
			if r.failure.HasPath {
				out["path"] = r.failure.Path
			}
			return out
		}
		out := map[string]any{}
		for _, k := range keep {
			out[k] = r.json[k]
		}
		return out
	}
	switch sc.Op {
	case "lstat":
		return outcome(run(t, ops, "lstat", args, nil), "kind")
	case "realpath", "mkdtemp":
		return outcome(run(t, ops, sc.Op, args, nil), "path")
	case "write":
		data := []byte(args["data"].(string))
		delete(args, "data")
		return outcome(run(t, ops, "write", args, data))
	case "opendir", "open":
		r := run(t, ops, sc.Op, args, nil)
		return outcome(r)
	case "openRead":
		r := run(t, ops, "open", map[string]any{"path": args["path"], "mode": "read"}, nil)
		if r.failure != nil {
			return outcome(r)
		}
		read := run(t, ops, "pread", map[string]any{"handle": r.json["handle"], "length": 64}, nil)
		if read.failure != nil {
			return outcome(read)
		}
		return map[string]any{"bytes": float64(len(read.payload))}
	}
	return outcome(run(t, ops, sc.Op, args, nil))
}

// TestAgainstNode runs every scenario on two copies of the fixture, one with Node's fs.promises, one with the
// agent, and compares outcomes (code, syscall, path) and the trees left behind.
func TestAgainstNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	list := scenarios()
	base := t.TempDir()
	nodeRoots := make([]string, len(list))
	ourRoots := make([]string, len(list))
	nodeInput := make([]scenario, len(list))
	for i, sc := range list {
		nodeRoots[i] = filepath.Join(base, fmt.Sprintf("n%03d", i))
		ourRoots[i] = filepath.Join(base, fmt.Sprintf("o%03d", i))
		for _, root := range []string{nodeRoots[i], ourRoots[i]} {
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
			fixture(t, root)
		}
		nodeInput[i] = scenario{Op: sc.Op, Args: withRoot(sc.Args, nodeRoots[i])}
	}
	input, _ := json.Marshal(nodeInput)
	cmd := exec.Command(node, "-e", nodeRunner)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stderr = os.Stderr
	output, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want []map[string]any
	if err := json.Unmarshal(output, &want); err != nil {
		t.Fatalf("node output %s: %v", output, err)
	}
	for i, sc := range list {
		got := normalise(sc.Op, ours(t, sc, ourRoots[i]), ourRoots[i])
		expected := normalise(sc.Op, want[i], nodeRoots[i])
		if got != expected {
			t.Errorf("%s %v:\n agent %s\n node  %s", sc.Op, sc.Args, got, expected)
		}
		ourTree, nodeTree := tree(t, ourRoots[i]), tree(t, nodeRoots[i])
		if sc.Op != "mkdtemp" && !reflect.DeepEqual(ourTree, nodeTree) {
			t.Errorf("%s %v left different trees:\n agent %v\n node  %v", sc.Op, sc.Args, ourTree, nodeTree)
		}
	}
}

// realpath follows at most 40 symbolic links, as glibc's realpath(3) behind Node's fs.realpath: a chain of 40
// resolves, one of 41 fails ELOOP (recorded from Node 20: realpath of l40 gives the target, of l41 ELOOP).
// Killed mutant: `links > maxSymlinks` as `>=`.
func TestRealpathFollowsFortyLinks(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "target"), "x")
	previous := "target"
	for i := 1; i <= 41; i++ {
		link := fmt.Sprintf("l%d", i)
		if err := os.Symlink(previous, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
		previous = link
	}
	ops := New()
	got := run(t, ops, "realpath", map[string]any{"path": filepath.Join(root, "l40")}, nil).must(t)
	if got.json["path"] != filepath.Join(root, "target") {
		t.Fatalf("realpath of 40 links: %v", got.json)
	}
	run(t, ops, "realpath", map[string]any{"path": filepath.Join(root, "l41")}, nil).
		expectFailure(t, "ELOOP", "realpath", filepath.Join(root, "l41"), "")
}
