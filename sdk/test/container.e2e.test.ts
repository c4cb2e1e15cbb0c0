/**
 * `connectContainer` against real Podman (the fixture's own storage and configuration): deployment into fresh
 * containers of each root filesystem, verification and replacement of a tampered or truncated agent, the
 * deployment directory rule (no HOME, read-only root, a non-root user), a container stopped in the middle of a
 * command or removed and recreated, and the error codes. Every container is removed, pass or fail.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandOf, containerProcesses } from "../../tools/podman-leftovers.js";
import { type ContainerExecutionEnv, connectContainer, containerConnection, getOrThrow } from "../src/index.js";
import { type ContainerSpec, type Podman, startPodman } from "./fixtures/podman.js";

const none = { abortSignal: undefined };

let podman: Podman;
beforeAll(async () => {
  podman = await startPodman();
});
afterAll(async () => {
  await podman?.dispose();
  // dispose() is bounded (see the fixture): its podman rm, then removal by force.
}, 120_000);

/** The stdout of a string command run by the env. */
async function output(env: ContainerExecutionEnv, command: string): Promise<string> {
  let text = "";
  const result = getOrThrow(await env.exec(command, { onOutput: (chunk) => (text += chunk) }, none));
  expect(result.exitCode, text).toBe(0);
  return text;
}

/** Runs `spec` and connects to it; returns the env and the container's name. */
async function connected(spec: ContainerSpec, user?: string, env?: Record<string, string>) {
  const name = await podman.start(spec);
  const connectedEnv = getOrThrow(await connectContainer(name, { engine: "podman", user, env }));
  return { name, env: connectedEnv };
}

/** The command lines of the processes running inside this file's containers. */
function inContainers(): string[] {
  return containerProcesses(podman.dir).map((pid) => commandOf(pid));
}

/** This process's live children, as `pid args` lines. */
function childrenOfThisProcess(): string[] {
  return processes()
    .filter(({ ppid, state }) => ppid === process.pid && state !== "Z")
    .map(({ pid, args }) => `${pid} ${args}`);
}

function processes(): { pid: number; ppid: number; state: string; args: string }[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, "utf8");
        const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const args = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
        return state === "Z" ? [] : [{ pid: Number(name), ppid: Number(ppid), state, args }];
      } catch {
        return [];
      }
    });
}

/** The agent's file in the container as the agent deployed it. */
function deployedPath(env: ContainerExecutionEnv): string {
  const deployed = env.connection.deployed();
  if (deployed === undefined) throw new Error("nothing deployed");
  return deployed.path;
}

describe("connectContainer with podman", { timeout: 120_000 }, () => {
  it("deploys into a fresh busybox container under $HOME, and the next connection only verifies", async () => {
    const { name, env } = await connected({ rootfs: "busybox" });
    expect(env.platform).toMatchObject({ platform: "linux", shell: true, dir: "/root/.outpost/bin" });
    expect(env.connection.deployed()?.copied).toBe(true);
    expect(deployedPath(env)).toMatch(/^\/root\/.outpost\/bin\/outpost-[0-9a-f]{64}$/);
    expect(await output(env, "echo hello; id -u")).toBe("hello\n0\n");
    expect(env.cwd).toBe("/");
    await env.close();
    const again = getOrThrow(await connectContainer(name, { engine: "podman" }));
    expect(again.connection.deployed()).toEqual({ ...env.connection.deployed(), copied: false });
    await again.close();
    await podman.remove(name);
  });

  it("a warm start verifies and starts the agent in one engine command", async () => {
    const { name, env } = await connected({ rootfs: "busybox" });
    await env.close();
    // podman's own event log (the fixture's events.log) counts the execs: the platform probe, then one command
    // that hashes the agent and, verified, becomes it; without the shortcut, a hash and then a start.
    const execs = () =>
      readFileSync(join(podman.dir, "events.log"), "utf8")
        .split("\n")
        .filter((line) => line.includes(`"Name":"${name}"`) && line.includes('"Status":"exec"')).length;
    for (const [verifiedStart, expected] of [
      [true, 2],
      [false, 3],
    ] as const) {
      const before = execs();
      const again = getOrThrow(await connectContainer(name, { engine: "podman", verifiedStart }));
      expect(await output(again, "echo warm")).toBe("warm\n");
      expect([verifiedStart, execs() - before]).toEqual([verifiedStart, expected]);
      expect(again.connection.deployed()?.copied).toBe(false);
      await again.close();
    }
    await podman.remove(name);
  });

  it("deploys into a container with the host's dash and coreutils, no busybox", async () => {
    const { name, env } = await connected({ rootfs: "dash" });
    expect(env.platform.dir).toBe("/root/.outpost/bin");
    expect(await output(env, "echo from-dash")).toBe("from-dash\n");
    await env.close();
    await podman.remove(name);
  });

  it("deploys into a container without a shell with podman cp and verifies from outside", async () => {
    const { name, env } = await connected({ rootfs: "noshell" });
    expect(env.platform).toMatchObject({ platform: "linux", arch: "x64", shell: false, dir: "/tmp/.outpost/bin" });
    getOrThrow(await env.writeFile("/tmp/note.txt", "no shell here", none));
    expect(getOrThrow(await env.readTextFile("/tmp/note.txt", none))).toBe("no shell here");
    await env.close();
    const again = getOrThrow(await connectContainer(name, { engine: "podman" }));
    expect(again.connection.deployed()?.copied).toBe(false);
    // Tampered: the copy read back does not hash right, so it is copied again.
    await podman.run(["cp", "/bin/busybox", `${name}:${deployedPath(again)}`]);
    await again.close();
    const third = getOrThrow(await connectContainer(name, { engine: "podman" }));
    expect(third.connection.deployed()?.copied).toBe(true);
    expect(getOrThrow(await third.readTextFile("/tmp/note.txt", none))).toBe("no shell here");
    await third.close();
    await podman.remove(name);
  });

  it("replaces a tampered or truncated agent before starting it", async () => {
    const { name, env } = await connected({ rootfs: "busybox" });
    const path = deployedPath(env);
    await env.close();
    for (const damage of [`echo tampered >> ${path}`, `head -c 4096 ${path} > /tmp/t && cat /tmp/t > ${path}`]) {
      await podman.run(["exec", name, "sh", "-c", damage]);
      const before = (await podman.run(["exec", name, "sha256sum", path])).stdout.split(" ")[0];
      expect(before).not.toBe(env.connection.deployed()?.sha256);
      const fresh = getOrThrow(await connectContainer(name, { engine: "podman" }));
      expect(fresh.connection.deployed()).toEqual({ ...env.connection.deployed(), copied: true });
      expect(await output(fresh, "echo ok")).toBe("ok\n");
      const after = (await podman.run(["exec", name, "sha256sum", path])).stdout.split(" ")[0];
      expect(after).toBe(env.connection.deployed()?.sha256);
      await fresh.close();
    }
    await podman.remove(name);
  });

  it("deploys to /tmp/.outpost/bin when HOME is not an absolute path, or not the user's to write", async () => {
    // Podman's exec never runs without HOME (an empty one becomes the passwd entry's, or /): the env option, which
    // every command in the container gets, makes it relative, which the rule treats as no HOME.
    const noHome = await connected({ rootfs: "busybox" }, undefined, { HOME: "relative/home" });
    expect(noHome.env.platform.dir).toBe("/tmp/.outpost/bin");
    expect(await output(noHome.env, 'echo "[$HOME]"')).toBe("[relative/home]\n");
    await noHome.env.close();
    // uid 2000 has no passwd entry: podman gives it HOME=/, which it cannot write.
    const stranger = await connected({ rootfs: "busybox" }, "2000:2000");
    expect(stranger.env.platform.dir).toBe("/tmp/.outpost/bin");
    expect(await output(stranger.env, 'echo "$(id -u) $HOME"')).toBe("2000 /\n");
    await stranger.env.close();
    await podman.remove(noHome.name);
    await podman.remove(stranger.name);
  });

  it("deploys to the writable /tmp of a read-only root filesystem", async () => {
    const { name, env } = await connected({ rootfs: "busybox", readOnly: true });
    expect(env.platform.dir).toBe("/tmp/.outpost/bin");
    expect(await output(env, "touch /x 2>&1; echo $?")).toBe("touch: /x: Read-only file system\n1\n");
    await env.close();
    await podman.remove(name);
  });

  it("runs as a non-root container user, deploying into that user's home", async () => {
    const { name, env } = await connected({ rootfs: "busybox" }, "app");
    expect(env.platform.dir).toBe("/home/app/.outpost/bin");
    expect(await output(env, "id -u; echo $HOME")).toBe("1000\n/home/app\n");
    const owner = await podman.run(["exec", name, "stat", "-c", "%u %a", deployedPath(env)]);
    expect(owner.stdout).toBe("1000 755\n");
    await env.close();
    await podman.remove(name);
  });

  it("a container stopped in the middle of a command loses the connection; the next call fails container_not_running", async () => {
    const { name, env } = await connected({ rootfs: "busybox" });
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const pending = env.exec("echo started; exec sleep 600", { onOutput: () => started() }, none);
    await running;
    await podman.stop(name);
    const result = await pending;
    expect(result.ok ? "finished" : result.error.code).toBe("unknown");
    const next = await env.exec("echo again", {}, none);
    expect(next.ok ? "ran" : next.error.code).toBe("unknown");
    expect(next.ok ? "" : next.error.message).toMatch(/container state improper/);
    expect(env.connection.lastStartError()?.code).toBe("container_not_running");
    await env.close();
    await podman.remove(name);
  });

  it("a removed container fails container_not_found; recreated under the same name, the agent is deployed again", async () => {
    const { name, env } = await connected({ rootfs: "busybox" });
    // A command running across the removal: its failure shows the connection's loss was seen, so the next call
    // starts the agent again (a call made before the loss is seen would fail as lost without a start).
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const pending = env.exec("echo started; exec sleep 600", { onOutput: () => started() }, none);
    await running;
    await podman.remove(name);
    const lost = await pending;
    expect(lost.ok ? "finished" : lost.error.code).toBe("unknown");
    const gone = await env.fileInfo("/", none);
    expect(gone.ok).toBe(false);
    expect(env.connection.lastStartError()?.code).toBe("container_not_found");
    await podman.start({ rootfs: "busybox", name });
    expect(await output(env, "echo back")).toBe("back\n");
    expect(env.connection.deployed()?.copied).toBe(true);
    await env.close();
    await podman.remove(name);
  });

  it("close() returns once the agent inside the container has stopped, with the command it ran", async () => {
    const { name, env } = await connected({ rootfs: "busybox" });
    const running = env.exec("exec sleep 600", {}, none);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(inContainers().join("\n")).toMatch(/sleep 600/);
    await env.close();
    // Looked at the moment close() returned: killing `podman exec` alone would leave the agent running in there.
    expect(inContainers().filter((line) => /outpost-|sleep 600/.test(line))).toEqual([]);
    expect((await running).ok).toBe(false);
    await podman.remove(name);
  });

  it("close() ends within its bound when the engine's client does not (podman exec stopped)", async () => {
    const { name, env } = await connected({ rootfs: "busybox" });
    const client = childrenOfThisProcess().find((line) => line.includes(`podman exec -i ${name} `));
    if (client === undefined) throw new Error(`no podman exec -i ${name} among ${childrenOfThisProcess()}`);
    const pid = Number(client.split(" ")[0]);
    process.kill(pid, "SIGSTOP");
    // The grace, then SIGTERM (a stopped process does not act on it), then SIGKILL: the test's timeout is the bound.
    await env.close();
    expect(childrenOfThisProcess().filter((line) => line.startsWith(`${pid} `))).toEqual([]);
    await podman.remove(name);
  });

  it("fails with container_not_found, engine_missing and invalid before running anything", async () => {
    const missing = await connectContainer("outpost-no-such-container", { engine: "podman" });
    expect(missing.ok ? "connected" : missing.error.code).toBe("container_not_found");
    expect(missing.ok ? "" : missing.error.message).toContain("podman exec -i outpost-no-such-container sh -c");
    const path = process.env.PATH;
    const empty = await mkdtemp(join(tmpdir(), "outpost-empty-path-"));
    process.env.PATH = empty;
    try {
      const auto = containerConnection("c");
      expect(auto.ok ? "found" : auto.error.code).toBe("engine_missing");
    } finally {
      process.env.PATH = path;
      await rm(empty, { recursive: true, force: true });
    }
    const invalid = containerConnection("-rf", { engine: "podman" });
    expect(invalid.ok ? "valid" : invalid.error.code).toBe("invalid");
  });
});
