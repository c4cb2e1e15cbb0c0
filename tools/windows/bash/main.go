// Command bash is the POSIX shell stand-in of `make test-windows`: Wine has no bash, and a Linux ELF cannot be
// spawned by Windows Node (libuv fails AssignProcessToJobObject), so this Windows program is installed where the
// envs look for Git Bash (`C:\Program Files\Git\bin\bash.exe`). It interprets scripts with mvdan.cc/sh and
// runs a few core utilities in-process (see utilities.go).
//
// It is one multi-call binary: run as `bash` or `sh` it takes `-c script [argv0 args...]`; run under any other
// name (`sleep.exe`, `printf.exe`, ... copies on PATH) it runs that utility or shell builtin with its arguments.
// Test tooling only; never shipped.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

func main() {
	os.Exit(run(os.Args))
}

func run(args []string) int {
	name := strings.ToLower(strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0])))
	if name == "bash" || name == "sh" {
		return shell(args[1:])
	}
	// A utility: run `"$@"` with the utility's name and arguments as the positional parameters, so shell
	// builtins (printf, pwd, true, ...) and the in-process utilities both work; nothing falls back to PATH,
	// which would find this program again.
	return interpret(`"$@"`, append([]string{name}, args[1:]...), false)
}

func shell(args []string) int {
	if len(args) < 2 || args[0] != "-c" {
		fmt.Fprintln(os.Stderr, "bash stand-in: usage: bash -c script [argv0 args...]")
		return 2
	}
	script := args[1]
	params := args[2:]
	if len(params) > 0 {
		params = params[1:] // $0 is not a positional parameter.
	}
	return interpret(script, params, true)
}

func interpret(script string, params []string, external bool) int {
	file, err := syntax.NewParser().Parse(strings.NewReader(script), "")
	if err != nil {
		fmt.Fprintf(os.Stderr, "bash: %v\n", err)
		return 2
	}
	runner, err := interp.New(
		interp.Params(append([]string{"--"}, params...)...),
		interp.Env(expand.ListEnviron(os.Environ()...)),
		interp.StdIO(os.Stdin, os.Stdout, os.Stderr),
		interp.CallHandler(replaceBuiltins),
		interp.ExecHandlers(utilities(external)),
	)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bash: %v\n", err)
		return 2
	}
	err = runner.Run(context.Background(), file)
	var status interp.ExitStatus
	if errors.As(err, &status) {
		return int(status)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bash: %v\n", err)
		return 1
	}
	return 0
}
