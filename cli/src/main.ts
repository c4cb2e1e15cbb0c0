/**
 * `outpost`: the command line for people, on the SDK. Each command opens its `<target>` (`local` or an SSH
 * target), does one thing and exits 0 on success, 1 on a failure, 2 on a usage error; `exec` and `sh` exit with the
 * remote command's code (130 when Ctrl-C aborted it); a closed stdout ends it by SIGPIPE (docs/cli.md).
 */
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { deploy, deployedIn } from "./commands/deploy.js";
import { doctor } from "./commands/doctor.js";
import { cat, find, get, ls, put, rm, watch } from "./commands/files.js";
import { GREP_EXIT, type GrepOptions, grep } from "./commands/grep.js";
import { accept, forget, scan } from "./commands/hosts.js";
import { runCommand } from "./commands/run.js";
import { asFailure, EXIT, errorLine, failureExit, failuresExitWith, localFileCode, usage } from "./exit.js";
import { dieOfSigpipe, outputFailure, readerGone, watchOutput } from "./output.js";
import { isContainer, isLocal, type Session, sshOptions, type TargetFlags, withTarget } from "./target.js";

const EXIT_CODES = `
Exit codes: 0 ok, 1 failure, 2 usage error; exec and sh exit with the remote command's code (130 after Ctrl-C).
When the reader of stdout goes away (| head), a running command is stopped and outpost dies of SIGPIPE (status 141).
<target> is "local" (this machine, through the local agent) or an SSH target: user@host[:port] or an ssh config alias.`;

/** The line after a usage error's. */
const USAGE_HINT = "(run with --help for usage)";

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number <= 0) throw new InvalidArgumentError("expected a positive integer");
  return number;
}

function contextLines(value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 0 || number > 1000) {
    throw new InvalidArgumentError("expected an integer from 0 to 1000");
  }
  return number;
}

/** Commander's `error: unknown command 'x'\n` as the message alone. */
function commanderMessage(text: string): string {
  return text.trim().replace(/^error: /, "");
}

function program(): Command {
  const root = new Command("outpost")
    .description(
      "Run commands, move files, check hosts and deploy the Outpost agent, on this machine, over SSH or in a container.",
    )
    .exitOverride()
    // The global flags come before the command, so a command may reuse their letters (grep's -i, -F, -C).
    .enablePositionalOptions()
    .showHelpAfterError(USAGE_HINT)
    // Commander's own usage errors get the CLI's one-line form, code included.
    .configureOutput({ outputError: (text, write) => write(errorLine(commanderMessage(text), "usage")) })
    .option("-i, --identity <file>", "a private key to offer over SSH (repeatable)", collect)
    .option("-F, --ssh-config <file>", 'the ssh config file to read ("none" for none; default ~/.ssh/config)')
    .option("--known-hosts <file>", "Outpost's known-hosts file (default ~/.outpost/known_hosts)")
    .option("--trusted-known-hosts <file>", "another known-hosts file to trust, never written (repeatable)", collect)
    .option("--connect-timeout <seconds>", "seconds to connect and authenticate per SSH hop", positiveInteger)
    .option("--agent-binary <file>", "the agent binary to run or deploy (default: the packaged one)")
    .option("-C, --cwd <dir>", "the working directory on the target (default: local cwd, or the remote home)")
    .addHelpText("after", EXIT_CODES);

  const flags = (command: Command): TargetFlags => command.optsWithGlobals<TargetFlags>();
  const on = async (command: Command, target: string, use: (session: Session) => Promise<number | undefined>) => {
    process.exitCode = (await withTarget(target, flags(command), use)) ?? EXIT.ok;
  };
  const sshOnly = (what: string, target: string) => {
    if (isLocal(target) || isContainer(target)) throw usage(`${what} needs an SSH target, not "${target}"`);
  };

  root
    .command("exec")
    .description("run a program with arguments (no shell); output streams, its exit code is passed through")
    .argument("<target>", "local, an SSH target, or podman://, docker://, kubectl:// and a container")
    .argument("<argv...>", "the program and its arguments, after --")
    .usage("<target> -- <argv...>")
    .action((target: string, argv: string[], _options, command: Command) =>
      on(command, target, (session) => runCommand(session, argv)),
    );

  root
    .command("sh")
    .description("run a command line in the target's shell; output streams, its exit code is passed through")
    .argument("<target>", "local, an SSH target, or podman://, docker://, kubectl:// and a container")
    .argument("<command>", "the command line, quoted as one argument")
    .action((target: string, line: string, _options, command: Command) =>
      on(command, target, (session) => runCommand(session, line)),
    );

  root
    .command("ls")
    .description("list a directory (size, name; / marks a directory, @ a symlink)")
    .argument("<target>")
    .argument("<path>")
    .action((target: string, path: string, _options, command: Command) =>
      on(command, target, async (session) => void (await ls(session, path))),
    );

  root
    .command("cat")
    .description("print a file's bytes")
    .argument("<target>")
    .argument("<path>")
    .action((target: string, path: string, _options, command: Command) =>
      on(command, target, async (session) => void (await cat(session, path))),
    );

  root
    .command("put")
    .description("copy a local file (- for stdin) to a path on the target")
    .argument("<target>")
    .argument("<local>")
    .argument("<path>")
    .action((target: string, local: string, path: string, _options, command: Command) =>
      on(command, target, async (session) => void (await put(session, local, path))),
    );

  root
    .command("get")
    .description("copy a file from the target to a local path (- for stdout)")
    .argument("<target>")
    .argument("<path>")
    .argument("<local>")
    .action((target: string, path: string, local: string, _options, command: Command) =>
      on(command, target, async (session) => void (await get(session, path, local))),
    );

  root
    .command("rm")
    .description("remove a file (a directory with -r)")
    .argument("<target>")
    .argument("<path>")
    .option("-r, --recursive", "remove a directory and everything in it")
    .option("-f, --force", "no error when the path does not exist")
    .action((target: string, path: string, options: { recursive?: boolean; force?: boolean }, command: Command) =>
      on(command, target, async (session) => void (await rm(session, path, options))),
    );

  root
    .command("find")
    .description("list the files under a directory, gitignore-aware (the agent's listFiles)")
    .argument("<target>")
    .argument("<dir>")
    .option("-g, --glob <pattern>", "a gitignore-style pattern files must match (repeatable)", collect)
    .option("-n, --limit <N>", "list at most N paths", positiveInteger)
    .option("--no-hidden", "skip dot-files and dot-directories")
    .option("--no-ignore", "do not honour .gitignore and .ignore files")
    .action(
      (
        target: string,
        dir: string,
        options: { glob?: string[]; limit?: number; hidden: boolean; ignore: boolean },
        command: Command,
      ) => on(command, target, async (session) => void (await find(session, dir, options))),
    );

  root
    .command("grep")
    .description("print the lines matching a regex under a directory as rg -n does (the agent's searchFiles)")
    .argument("<target>")
    .argument("<pattern>", "a regular expression (ripgrep's syntax; -- before one starting with -)")
    .argument("[dir]", "a directory or a file (default: the working directory)")
    .option("-g, --glob <pattern>", "a gitignore-style pattern files must match (repeatable)", collect)
    .option("-i, --ignore-case", "match case-insensitively")
    .option("-S, --smart-case", "case-insensitive when the pattern has no uppercase letter")
    .option("-w, --word-regexp", "only matches with no word character right before and after")
    .option("-F, --fixed-strings", "the pattern is a fixed string, not a regex")
    .option("-C, --context <N>", "lines of context before and after each match", contextLines)
    .option("-B, --before-context <N>", "lines of context before each match", contextLines)
    .option("-A, --after-context <N>", "lines of context after each match", contextLines)
    .option("-m, --max-count <N>", "at most N matching lines per file", positiveInteger)
    .option("--limit <N>", "at most N matching lines in all (a notice on stderr when more exist)", positiveInteger)
    .option("--no-hidden", "skip dot-files and dot-directories")
    .option("--no-ignore", "do not honour .gitignore and .ignore files")
    .addHelpText("after", "\nExit codes of grep: 0 a line matched, 1 none did, 2 a failure (as grep and rg).")
    .action((target: string, pattern: string, dir: string | undefined, options: GrepOptions, command: Command) => {
      failuresExitWith(GREP_EXIT.failure);
      return on(command, target, (session) => grep(session, pattern, dir, options));
    });

  root
    .command("watch")
    .description("print changed paths as they come, until Ctrl-C")
    .argument("<target>")
    .argument("<paths...>")
    .option("--no-recursive", "watch only the named paths, not what is under them")
    .action((target: string, paths: string[], options: { recursive: boolean }, command: Command) =>
      on(command, target, async (session) => void (await watch(session, paths, options))),
    );

  const hosts = root.command("hosts").description("SSH host-key trust: scan, accept or forget a target's key");
  hosts
    .command("scan")
    .description("show the host key the target presents (trusts nothing)")
    .argument("<target>")
    .action(async (target: string, _options, command: Command) => {
      sshOnly("hosts scan", target);
      await scan(target, sshOptions(flags(command)));
    });
  hosts
    .command("accept")
    .description("trust the target's key: it must have --fingerprint, or be confirmed on the terminal")
    .argument("<target>")
    .option("--fingerprint <SHA256:...>", "the fingerprint the key must have (from `hosts scan`, checked out of band)")
    .action(async (target: string, options: { fingerprint?: string }, command: Command) => {
      sshOnly("hosts accept", target);
      await accept(target, options.fingerprint, sshOptions(flags(command)));
    });
  hosts
    .command("forget")
    .description("remove every key of the target from Outpost's known-hosts file")
    .argument("<target>")
    .action(async (target: string, _options, command: Command) => {
      sshOnly("hosts forget", target);
      await forget(target, sshOptions(flags(command)));
    });

  root
    .command("deploy")
    .description("upload and verify the agent on an SSH target (with a progress bar) or in a container")
    .argument("<target>")
    .action(async (target: string, _options, command: Command) => {
      // A container's agent is verified or deployed by opening it.
      if (isContainer(target)) return on(command, target, async (session) => deployedIn(session));
      sshOnly("deploy", target);
      const given = flags(command);
      await deploy(target, { ...sshOptions(given), agentBinary: given.agentBinary });
    });

  root
    .command("doctor")
    .description("check the target: the agent's own doctor, plus host key, platform and round-trip time")
    .argument("<target>")
    .option("--json", "one JSON object instead of lines")
    .action((target: string, options: { json?: boolean }, command: Command) =>
      on(command, target, (session) =>
        doctor(
          session,
          isLocal(target) || isContainer(target) ? undefined : sshOptions(flags(command)),
          options.json === true,
        ),
      ),
    );

  for (const command of [...root.commands, ...hosts.commands]) command.addHelpText("after", EXIT_CODES);
  return root;
}

async function main(): Promise<void> {
  watchOutput();
  let thrown: unknown;
  try {
    await program().parseAsync(process.argv);
  } catch (error) {
    thrown = error;
  }
  // A failed write reports to its callback before stdout emits 'error'; let the event arrive before judging.
  await new Promise((resolve) => setImmediate(resolve));
  // The reader of stdout went away: the work has stopped, and the CLI ends the way `seq 1e9 | head -1` does.
  if (readerGone()) return dieOfSigpipe();
  const broken = outputFailure();
  if (broken !== undefined) {
    // Whatever the command threw after that is a consequence of the stopped work.
    process.stderr.write(errorLine(`cannot write to stdout: ${broken.message}`, localFileCode(broken)));
    process.exitCode = failureExit(EXIT.failure);
  } else if (thrown instanceof CommanderError) {
    // Commander has printed the message or the help already.
    process.exitCode = thrown.exitCode === 0 ? EXIT.ok : EXIT.usage;
  } else if (thrown !== undefined) {
    const failure = asFailure(thrown);
    process.stderr.write(errorLine(failure.message, failure.code));
    if (failure.exitCode === EXIT.usage) process.stderr.write(`${USAGE_HINT}\n`);
    process.exitCode = failureExit(failure.exitCode);
  }
  // An SSH socket or a watcher could keep the loop alive a moment after the work is done; the work is done.
  process.exit();
}

await main();
