//go:build unix

package errno

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

var (
	errENOENT    = unix.ENOENT
	errEISDIR    = unix.EISDIR
	errENOTEMPTY = unix.ENOTEMPTY
)

// TestUnixNamesMatchNode checks every errno of the table against Node's name for it (util.getSystemErrorName)
// and that the codes the protocol names are all there.
func TestUnixNamesMatchNode(t *testing.T) {
	for _, name := range []string{"EPERM", "ENOENT", "EIO", "EBADF", "EAGAIN", "ENOMEM", "EACCES", "EBUSY", "EEXIST",
		"EXDEV", "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ETXTBSY", "EFBIG", "ENOSPC", "EROFS", "EMLINK",
		"ENAMETOOLONG", "ENOTEMPTY", "ELOOP", "ENOSYS", "ENOTSUP", "ESPIPE", "ENXIO", "EPIPE"} {
		found := false
		for _, n := range unixNames {
			found = found || n == name
		}
		if !found {
			t.Errorf("%s missing", name)
		}
	}
	if Code(syscall.Errno(4000)) != Unknown || describe(Unknown, syscall.Errno(4000)) == "" {
		t.Error("unknown errno")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	numbers := []int{}
	for e := range unixNames {
		numbers = append(numbers, int(e))
	}
	input, _ := json.Marshal(numbers)
	out, err := exec.Command(node, "-e", `const util = require("util");
process.stdout.write(JSON.stringify(`+string(input)+`.map((n) => util.getSystemErrorName(-n))));`).Output()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := json.Unmarshal(out, &names); err != nil {
		t.Fatal(err)
	}
	for i, n := range numbers {
		if got := Code(syscall.Errno(n)); got != names[i] {
			t.Errorf("errno %s: %s; Node %s", strconv.Itoa(n), got, names[i])
		}
	}
}
