package execop

import (
	"strconv"
	"strings"

	"github.com/outpost-dev/outpost/agent-go/internal/nodefmt"
	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// plan is an exec request turned into everything a spawn needs, decided before anything starts.
type plan struct {
	// shell is the shell chosen for a string command ("" for an argv request).
	shell string
	// program is the program as Node's spawn receives it: argv[0] of the child and the name in spawn errors.
	program string
	// path is where the program was found: the file to execute.
	path string
	// argv starts with program.
	argv []string
	dir  string
	// env is the child's environment as KEY=VALUE lines, as the platform hands it over.
	env []string
	// stdin, when set, is written to the child's stdin, which is then closed (legacy WSL bash reads the
	// command there); otherwise stdin is the null device.
	stdin *string
}

// planExec turns a request into a plan, failing in NodeExecutionEnv's order: the shell (or the argv check),
// then the working directory, then Node's own argument validation, then the platform's checks and program
// search. It looks at the machine only through m.
func planExec(req *request, m machine) (*plan, *proto.Failure) {
	p := &plan{dir: req.cwd}
	if fail := p.chooseProgram(req, m); fail != nil {
		return nil, fail
	}
	dirInfo, err := m.stat(req.cwd)
	if err != nil {
		return nil, spawnError("Working directory does not exist: " + req.cwd + "\nCannot execute bash commands.")
	}
	env := mergeEnv(req.inheritEnv, m.environ(), req.env)
	if fail := validateArguments(p.argv, env); fail != nil {
		return nil, fail
	}
	path, fail := locateProgram(p.program, req.cwd, dirInfo, env, m)
	if fail != nil {
		return nil, fail
	}
	p.path = path
	p.env = childEnv(env, m)
	return p, nil
}

// chooseProgram sets the program and argv: the shell with the command for a string command, the request's
// argv otherwise.
func (p *plan) chooseProgram(req *request, m machine) *proto.Failure {
	if req.command == nil {
		if len(req.argv) == 0 {
			return spawnError("Empty argv: no program to run")
		}
		p.program, p.argv = req.argv[0], req.argv
		return nil
	}
	shell, fail := chooseShell(req.shellPath, m)
	if fail != nil {
		return fail
	}
	p.shell, p.program = shell, shell
	if isLegacyWSLBash(shell, m.variable("SystemRoot")) {
		text := *req.command
		p.argv, p.stdin = []string{shell, "-s"}, &text
	} else {
		p.argv = []string{shell, "-c", *req.command}
	}
	return nil
}

// chooseShell returns the configured shell, which must exist (following links), or the platform's default shell.
func chooseShell(shellPath string, m machine) (string, *proto.Failure) {
	if shellPath == "" {
		return selectShell(m)
	}
	if !m.exists(shellPath) {
		return "", &proto.Failure{Code: "shell_unavailable", Message: "Custom shell path not found: " + shellPath}
	}
	return shellPath, nil
}

// validateArguments repeats the checks Node's spawn makes before starting anything.
func validateArguments(argv []string, env []envEntry) *proto.Failure {
	if argv[0] == "" {
		return spawnError("The argument 'file' cannot be empty. Received ''")
	}
	if strings.ContainsRune(argv[0], 0) {
		return nulError("The argument 'file'", argv[0])
	}
	// Node's args array starts with the program itself.
	for i, arg := range argv[1:] {
		if strings.ContainsRune(arg, 0) {
			return nulError("The argument 'args["+strconv.Itoa(i+1)+"]'", arg)
		}
	}
	for _, e := range env {
		if strings.ContainsRune(e.key, 0) || strings.ContainsRune(e.value, 0) {
			return nulError("The property 'options.env["+nodefmt.InspectString(e.key)+"]'", e.value)
		}
	}
	return nil
}
