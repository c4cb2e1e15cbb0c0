package errno

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"testing"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

func TestMessageFormats(t *testing.T) {
	notFound := &fs.PathError{Op: "open", Path: "/x", Err: errENOENT}
	cases := []struct {
		name    string
		failure *proto.Failure
		code    string
		message string
		syscall string
		path    string
		hasPath bool
	}{
		{"path", Fail(notFound, "open", "/a/b"), "ENOENT", "ENOENT: no such file or directory, open '/a/b'", "open", "/a/b", true},
		{"empty path", Fail(notFound, "lstat", ""), "ENOENT", "ENOENT: no such file or directory, lstat ''", "lstat", "", true},
		{"handle", FailHandle(errEISDIR, "read"), "EISDIR", "EISDIR: illegal operation on a directory, read", "read", "", false},
		{"rename", FailRename(errENOTEMPTY, "/a", "/b"), "ENOTEMPTY", "ENOTEMPTY: directory not empty, rename '/a' -> '/b'", "rename", "/a", true},
		{"synthetic", New("ENOTDIR", "mkdir", "/p"), "ENOTDIR", "ENOTDIR: not a directory, mkdir '/p'", "mkdir", "/p", true},
		{"own errno", Fail(Errno("EISDIR"), "open", "/d"), "EISDIR", "EISDIR: illegal operation on a directory, open '/d'", "open", "/d", true},
		{"closed file", FailHandle(os.ErrClosed, "write"), "EBADF", "EBADF: bad file descriptor, write", "write", "", false},
		{"other error", FailHandle(errors.New("Odd Thing"), "read"), "UNKNOWN", "UNKNOWN: odd thing, read", "read", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.failure
			if f.Code != c.code || f.Message != c.message || f.Syscall != c.syscall || f.Path != c.path || f.HasPath != c.hasPath {
				t.Fatalf("got %+v", f)
			}
			wire := f.JSON()
			if _, present := wire["path"]; present != c.hasPath {
				t.Fatalf("path presence in %v", wire)
			}
		})
	}
	if dest := FailRename(errENOTEMPTY, "/a", "/b").JSON()["dest"]; dest != "/b" {
		t.Fatalf("dest = %v", dest)
	}
	// A failure passes through unchanged.
	original := &proto.Failure{Code: "SYMLINK", Message: "Refusing to follow a symbolic link"}
	if Fail(fmt.Errorf("wrapped: %w", original), "open", "/x") != original {
		t.Fatal("a wrapped failure was rebuilt")
	}
}

func TestCode(t *testing.T) {
	if Code(nil) != "" || !Is(fmt.Errorf("ctx: %w", &fs.PathError{Err: errENOENT}), "ENOENT") || Is(nil, "ENOENT") {
		t.Fatal("Code/Is basics")
	}
	if Code(errors.New("plain")) != Unknown {
		t.Fatal("plain error")
	}
}

// TestDescriptionsMatchNode compares the description table with Node's own (util.getSystemErrorMap).
func TestDescriptionsMatchNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	out, err := exec.Command(node, "-e", `const m = {}; for (const [, [name, text]] of require("util").getSystemErrorMap()) m[name] = text;
process.stdout.write(JSON.stringify(m));`).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for name, text := range descriptions {
		nodeText, known := want[name]
		if !known && name != "ECHARSET" && name != "EFTYPE" {
			t.Errorf("%s is not a libuv name on this platform", name)
		}
		if known && nodeText != text {
			t.Errorf("%s: %q; Node %q", name, text, nodeText)
		}
	}
}
