/**
 * The `outpost` command on container targets, against real Podman (the fixture's storage, inherited through
 * CONTAINERS_CONF / CONTAINERS_STORAGE_CONF): every command on `podman://<container>`, the target syntax errors,
 * and a stopped container's failure. kubectl:// and docker:// share the parsing (cli/src/target.ts) and the SDK's
 * argv (sdk/test/container-engine.test.ts); no cluster or Docker daemon runs here.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Podman, startPodman } from "../../sdk/test/fixtures/podman.js";
import { parseContainerTarget } from "../src/target.js";
import { run, start } from "./run-cli.js";

let podman: Podman;
let dir: string;
let target: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "outpost-cli-container-"));
  podman = await startPodman();
  target = `podman://${await podman.start({ rootfs: "busybox" })}`;
});

afterAll(async () => {
  await podman?.dispose();
  await rm(dir, { recursive: true, force: true });
  // dispose() is bounded (its podman rm, then removal by force), beyond the default 30 s on a busy machine.
}, 120_000);

describe("outpost on podman://", { timeout: 120_000 }, () => {
  it("deploy copies the agent once, then only verifies it", async () => {
    const first = await run(["deploy", target]);
    expect(first.stdout).toMatch(/^deployed: \/root\/\.outpost\/bin\/outpost-[0-9a-f]{64} \(sha256 [0-9a-f]{64}\)\n$/);
    const second = await run(["deploy", target]);
    expect(second.stdout).toMatch(/^already deployed: /);
  });

  it("exec and sh pass output and exit codes through", async () => {
    const exec = await run(["exec", target, "--", "sh", "-c", "echo in-container; exit 3"]);
    expect([exec.code, exec.stdout]).toEqual([3, "in-container\n"]);
    const sh = await run(["sh", target, "uname -s; id -u"]);
    expect([sh.code, sh.stdout]).toEqual([0, "Linux\n0\n"]);
  });

  it("put, cat, ls, get, find and rm move and list files in the container", async () => {
    const local = join(dir, "note.txt");
    await writeFile(local, "from the host\n");
    expect((await run(["sh", target, "mkdir -p /tmp/cli"])).code).toBe(0);
    expect((await run(["put", target, local, "/tmp/cli/note.txt"])).code).toBe(0);
    expect((await run(["cat", target, "/tmp/cli/note.txt"])).stdout).toBe("from the host\n");
    expect((await run(["ls", target, "/tmp/cli"])).stdout).toContain("note.txt");
    const back = join(dir, "back.txt");
    expect((await run(["get", target, "/tmp/cli/note.txt", back])).code).toBe(0);
    expect(await readFile(back, "utf8")).toBe("from the host\n");
    expect((await run(["find", target, "/tmp/cli"])).stdout).toContain("note.txt");
    expect((await run(["rm", target, "/tmp/cli/note.txt"])).code).toBe(0);
    expect((await run(["cat", target, "/tmp/cli/note.txt"])).code).not.toBe(0);
  });

  it("watch reports a change made in the container", async () => {
    expect((await run(["sh", target, "mkdir -p /tmp/watched"])).code).toBe(0);
    const watching = start(["watch", target, "/tmp/watched"]);
    try {
      // The watcher is ready once the agent runs; a change made a moment later is reported.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await run(["sh", target, "echo x > /tmp/watched/new.txt"]);
      await watching.waitFor("new.txt", "stdout", 15_000);
    } finally {
      watching.child.kill("SIGINT");
      await watching.done;
    }
  });

  it("doctor reports the container's platform and agent", async () => {
    const doctor = await run(["doctor", target, "--json"]);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toContain("linux-x64");
    expect(doctor.stdout).toContain("/root/.outpost/bin/outpost-");
  });

  it("a missing container fails naming it and the engine's complaint; hosts commands refuse containers", async () => {
    const missing = await run(["sh", "podman://outpost-no-such", "true"]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("podman://outpost-no-such");
    expect(missing.stderr).toMatch(/no such container/i);
    const hosts = await run(["hosts", "scan", target]);
    expect(hosts.code).not.toBe(0);
    expect(hosts.stderr).toContain("needs an SSH target");
  });
});

describe("container target syntax", () => {
  it("parses podman, docker and kubectl targets", () => {
    expect(parseContainerTarget("podman://web")).toEqual({ engine: "podman", container: "web", engineArgs: [] });
    expect(parseContainerTarget("docker://3f2a")).toEqual({ engine: "docker", container: "3f2a", engineArgs: [] });
    expect(parseContainerTarget("kubectl://web-0")).toEqual({ engine: "kubectl", container: "web-0", engineArgs: [] });
    expect(parseContainerTarget("kubectl://team/web-0")).toEqual({
      engine: "kubectl",
      container: "web-0",
      engineArgs: ["-n", "team"],
    });
    expect(parseContainerTarget("kubectl://team/web-0/app")).toEqual({
      engine: "kubectl",
      container: "web-0/app",
      engineArgs: ["-n", "team"],
    });
    expect(parseContainerTarget("user@host")).toBeUndefined();
  });

  it("rejects malformed container targets", () => {
    for (const bad of ["podman://", "podman://a/b", "kubectl://a/b/c/d", "kubectl://a//b", "docker:///x"]) {
      expect(() => parseContainerTarget(bad), bad).toThrow(/expected podman:\/\/<container>/);
    }
  });
});
