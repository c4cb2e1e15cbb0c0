package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
)

// utility is one in-process core utility: it gets its arguments (without its name) and the handler context.
type utility func(ctx context.Context, hc interp.HandlerContext, args []string) error

// echoUtility is the name the shell's echo is rerouted to (see replaceBuiltins).
const echoUtility = "echo (stand-in)"

// The core utilities the conformance suite's scripts use, with only the options they use.
var utilityTable = map[string]utility{
	echoUtility: echo,
	"cat":       cat,
	"env":       env,
	"head":      head,
	"ln":        ln,
	"mkdir":     mkdir,
	"seq":       seq,
	"sleep":     sleep,
	"touch":     touch,
	"yes":       yes,
}

// utilities is the exec middleware: known utilities run in-process; others go to PATH when `external`
// (a shell script), or fail 127 (a utility copy, which must not start itself again through PATH).
func utilities(external bool) func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
		return func(ctx context.Context, args []string) error {
			if run, ok := utilityTable[args[0]]; ok {
				hc := interp.HandlerCtx(ctx)
				if err := run(ctx, hc, args[1:]); err != nil {
					fmt.Fprintf(hc.Stderr, "%s: %v\n", args[0], err)
					return interp.ExitStatus(1)
				}
				return nil
			}
			if !external {
				fmt.Fprintf(interp.HandlerCtx(ctx).Stderr, "%s: command not found\n", args[0])
				return interp.ExitStatus(127)
			}
			return next(ctx, args)
		}
	}
}

// replaceBuiltins reroutes echo to echoUtility: mvdan.cc/sh's builtin writes the text and the newline
// separately, so a reader of the pipe may see "early" and "\n" as two chunks where bash writes once.
func replaceBuiltins(_ context.Context, args []string) ([]string, error) {
	if len(args) > 0 && args[0] == "echo" {
		args[0] = echoUtility
	}
	return args, nil
}

// echo writes its arguments and the newline (none with -n) in one write.
func echo(_ context.Context, hc interp.HandlerContext, args []string) error {
	newline := "\n"
	if len(args) > 0 && args[0] == "-n" {
		newline = ""
		args = args[1:]
	}
	_, err := io.WriteString(hc.Stdout, strings.Join(args, " ")+newline)
	return err
}

func resolve(hc interp.HandlerContext, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(hc.Dir, path)
}

func cat(_ context.Context, hc interp.HandlerContext, args []string) error {
	if len(args) == 0 {
		_, err := io.Copy(hc.Stdout, hc.Stdin)
		return err
	}
	for _, name := range args {
		file, err := os.Open(resolve(hc, name))
		if err != nil {
			return err
		}
		_, err = io.Copy(hc.Stdout, file)
		file.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func env(_ context.Context, hc interp.HandlerContext, _ []string) error {
	var lines []string
	hc.Env.Each(func(name string, vr expand.Variable) bool {
		if vr.Exported && vr.IsSet() {
			lines = append(lines, name+"="+vr.String())
		}
		return true
	})
	sort.Strings(lines)
	out := bufio.NewWriter(hc.Stdout)
	for _, line := range lines {
		fmt.Fprintln(out, line)
	}
	return out.Flush()
}

// head supports `head -c N`, reading stdin or one file.
func head(_ context.Context, hc interp.HandlerContext, args []string) error {
	if len(args) < 2 || args[0] != "-c" {
		return fmt.Errorf("only head -c N [file] is supported")
	}
	count, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil {
		return err
	}
	var in io.Reader = hc.Stdin
	if len(args) > 2 {
		file, err := os.Open(resolve(hc, args[2]))
		if err != nil {
			return err
		}
		defer file.Close()
		in = file
	}
	_, err = io.CopyN(hc.Stdout, in, count)
	if err == io.EOF {
		return nil
	}
	return err
}

// ln makes hard links, or symbolic links with -s (whose target stays relative to the link, as given).
func ln(_ context.Context, hc interp.HandlerContext, args []string) error {
	symbolic := len(args) > 0 && args[0] == "-s"
	if symbolic {
		args = args[1:]
	}
	if len(args) != 2 {
		return fmt.Errorf("usage: ln [-s] target name")
	}
	if symbolic {
		return os.Symlink(args[0], resolve(hc, args[1]))
	}
	return os.Link(resolve(hc, args[0]), resolve(hc, args[1]))
}

func mkdir(_ context.Context, hc interp.HandlerContext, args []string) error {
	parents := len(args) > 0 && args[0] == "-p"
	if parents {
		args = args[1:]
	}
	for _, name := range args {
		var err error
		if parents {
			err = os.MkdirAll(resolve(hc, name), 0o777)
		} else {
			err = os.Mkdir(resolve(hc, name), 0o777)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// seq supports `seq FIRST LAST` of integers.
func seq(_ context.Context, hc interp.HandlerContext, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("only seq FIRST LAST is supported")
	}
	first, err := strconv.Atoi(args[0])
	if err != nil {
		return err
	}
	last, err := strconv.Atoi(args[1])
	if err != nil {
		return err
	}
	out := bufio.NewWriter(hc.Stdout)
	for i := first; i <= last; i++ {
		fmt.Fprintln(out, i)
	}
	return out.Flush()
}

func sleep(ctx context.Context, _ interp.HandlerContext, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: sleep SECONDS")
	}
	seconds, err := strconv.ParseFloat(args[0], 64)
	if err != nil {
		return err
	}
	timer := time.NewTimer(time.Duration(seconds * float64(time.Second)))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func touch(_ context.Context, hc interp.HandlerContext, args []string) error {
	now := time.Now()
	for _, name := range args {
		path := resolve(hc, name)
		file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o666)
		if err != nil {
			return err
		}
		file.Close()
		if err := os.Chtimes(path, now, now); err != nil {
			return err
		}
	}
	return nil
}

// yes writes its arguments joined by spaces (or "y") and a newline, over and over, until the reader goes away.
func yes(ctx context.Context, hc interp.HandlerContext, args []string) error {
	line := "y\n"
	if len(args) > 0 {
		line = strings.Join(args, " ") + "\n"
	}
	// Many lines per write: the windowed case reads megabytes of it.
	chunk := []byte(strings.Repeat(line, 1+65536/len(line)))
	for ctx.Err() == nil {
		if _, err := hc.Stdout.Write(chunk); err != nil {
			return nil // The reader closed the pipe, as with SIGPIPE: not an error of yes.
		}
	}
	return nil
}
