// Package opscmd holds the agent's subcommands for ops tools (Ansible, Salt, a Dockerfile): `version` to identify
// the binary, `install` to pre-install it where the SDK's deployment looks for it, `doctor` to check the machine's
// readiness. Usage errors exit 2; output a tool would parse is available as JSON.
package opscmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// Usage lists the ops subcommands, for the agent's usage text.
const Usage = "       outpost version [--json]\n       outpost install [--dir D] [--json]\n       outpost doctor [--json]"

// command is one subcommand: it parses its own flags and returns the exit status.
type command func(args []string, stdout, stderr io.Writer) int

var commands = map[string]command{
	"version": runVersion,
	"install": runInstall,
	"doctor":  runDoctor,
}

// Run runs the subcommand args[0] if it is one of this package's; handled is false otherwise.
func Run(args []string, stdout, stderr io.Writer) (status int, handled bool) {
	if len(args) == 0 {
		return 0, false
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return 0, false
	}
	return cmd(args[1:], stdout, stderr), true
}

// newFlags is a flag set that reports usage errors to stderr and never exits by itself.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	flags := flag.NewFlagSet("outpost "+name, flag.ContinueOnError)
	flags.SetOutput(stderr)
	return flags
}

// parse parses args into flags and refuses positional arguments; ok is false on a usage error (already
// reported), and status is then 2 (0 for an explicit -h).
func parse(flags *flag.FlagSet, args []string) (status int, ok bool) {
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(flags.Output(), "%s: unexpected argument %q\n", flags.Name(), flags.Arg(0))
		flags.Usage()
		return 2, false
	}
	return 0, true
}
