/**
 * The engine command lines Outpost builds, checked against each engine's documented forms — for kubectl the only
 * check there is, as no cluster runs here — and the pieces around them: targets, stderr classification, the
 * one-file tar archives `cp` reads and writes.
 *
 * Documented forms (`kubectl exec --help`, `kubectl cp --help`, `podman exec --help`, `docker exec --help`):
 * - `kubectl exec (POD | TYPE/NAME) [-c CONTAINER] [flags] -- COMMAND [args...]`, `-i`/`--stdin` to pass stdin;
 * - `kubectl cp <file-spec-src> <file-spec-dest> [-c CONTAINER]`, a pod file spec being `[namespace/]pod:path`;
 * - `podman|docker exec [options] CONTAINER COMMAND [ARG...]` with `-i`, `--user`, `--workdir`, `--env`;
 * - `podman|docker cp - CONTAINER:DEST` reads a tar archive on stdin, `cp CONTAINER:SRC -` writes one to stdout.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { needTool } from "../../tools/system-tools.js";
import { engineTarget } from "../src/container/connect.js";
import { classify, copyInArgv, copyOutArgv, execArgv, hostPlatformArgv } from "../src/container/engine.js";
import { firstFileOf, tarOfFile } from "../src/container/tar.js";

describe("kubectl argv (checked against the documented forms, not run: no cluster here)", () => {
  it("exec: -i, the pod, -c for a container, then -- and the command; env through env(1)", () => {
    const target = engineTarget("kubectl", "web-0/app", { engineArgs: ["-n", "team"], env: { A: "1" } });
    expect(execArgv(target, ["/tmp/outpost", "serve"])).toEqual([
      "kubectl",
      "-n",
      "team",
      "exec",
      "-i",
      "web-0",
      "-c",
      "app",
      "--",
      "env",
      "A=1",
      "/tmp/outpost",
      "serve",
    ]);
    const plain = engineTarget("kubectl", "web-0", {});
    expect(execArgv(plain, ["sh", "-c", "x"])).toEqual(["kubectl", "exec", "-i", "web-0", "--", "sh", "-c", "x"]);
  });

  it("cp: the local file to pod:path, -c for a container", () => {
    const target = engineTarget("kubectl", "web-0/app", { engineArgs: ["--context", "prod"] });
    expect(copyInArgv(target, "/local/agent", "/tmp/.outpost/bin/outpost-x")).toEqual([
      "kubectl",
      "--context",
      "prod",
      "cp",
      "/local/agent",
      "web-0:/tmp/.outpost/bin/outpost-x",
      "-c",
      "app",
    ]);
  });

  it("rejects what kubectl exec cannot do and malformed pods", () => {
    expect(() => engineTarget("kubectl", "p", { user: "app" })).toThrow(/--user/);
    expect(() => engineTarget("kubectl", "p", { workdir: "/srv" })).toThrow(/--workdir/);
    expect(() => engineTarget("kubectl", "a/b/c", {})).toThrow(/pod or pod\/container/);
    expect(() => engineTarget("kubectl", "a/", {})).toThrow(/pod or pod\/container/);
  });

  it("kubectl's own help documents the forms and flags used (kubectl: Debian's kubernetes-client)", () => {
    const kubectl = needTool("kubectl");
    const help = (command: string) => execFileSync(kubectl, [command, "--help"], { encoding: "utf8" });
    const exec = help("exec");
    expect(exec).toMatch(/-i, --stdin/);
    expect(exec).toMatch(/-c, --container/);
    expect(exec).toMatch(/kubectl exec \(POD \| TYPE\/NAME\) \[-c CONTAINER\] \[flags\] -- COMMAND \[args\.\.\.\]/);
    const cp = help("cp");
    expect(cp).toMatch(/-c, --container/);
    expect(cp).toContain("kubectl cp <file-spec-src> <file-spec-dest>");
  });
});

describe("podman and docker argv", () => {
  it("exec: -i, --user, --workdir (the agent only), --env, the container, the command", () => {
    for (const kind of ["podman", "docker"] as const) {
      const target = engineTarget(kind, "box", {
        engineArgs: ["--root", "/r"],
        user: "app",
        workdir: "/srv",
        env: { A: "1", B: "x=y" },
      });
      const flags = ["--user", "app", "--env", "A=1", "--env", "B=x=y"];
      expect(execArgv(target, ["id"])).toEqual([kind, "--root", "/r", "exec", "-i", ...flags, "box", "id"]);
      expect(execArgv(target, ["agent"], { workdir: true })).toEqual([
        kind,
        "--root",
        "/r",
        "exec",
        "-i",
        "--user",
        "app",
        "--workdir",
        "/srv",
        "--env",
        "A=1",
        "--env",
        "B=x=y",
        "box",
        "agent",
      ]);
    }
  });

  it("cp: a tar archive in at /, one out to stdout; the engine's platform", () => {
    const target = engineTarget("docker", "box", {});
    expect(copyInArgv(target, "-", "/tmp/x")).toEqual(["docker", "cp", "-", "box:/"]);
    expect(copyOutArgv(target, "/tmp/x")).toEqual(["docker", "cp", "box:/tmp/x", "-"]);
    expect(hostPlatformArgv(target)).toEqual(["docker", "version", "--format", "{{.Server.Os}}/{{.Server.Arch}}"]);
    expect(hostPlatformArgv(engineTarget("podman", "box", {}))).toEqual([
      "podman",
      "info",
      "--format",
      "{{.Host.OS}}/{{.Host.Arch}}",
    ]);
  });

  it("rejects a target that would read as an option", () => {
    expect(() => engineTarget("podman", "--privileged", {})).toThrow(/Invalid container/);
    expect(() => engineTarget("podman", "", {})).toThrow(/Invalid container/);
  });
});

describe("stderr classification", () => {
  it.each([
    ['Error: no container with name or ID "x" found: no such container', "container_not_found"],
    ["Error response from daemon: No such container: x", "container_not_found"],
    ['Error from server (NotFound): pods "x" not found', "container_not_found"],
    ['error: unable to upgrade connection: container not found ("app")', "container_not_found"],
    ["Error: can only create exec sessions on running containers: container state improper", "container_not_running"],
    ["Error response from daemon: container abc is not running", "container_not_running"],
    ["error: cannot exec into a container in a completed pod; current phase is Succeeded", "container_not_running"],
    ["Error: runc: exec failed: unable to start container process: permission denied", undefined],
  ])("%s → %s", (stderr, code) => {
    expect(classify(stderr)).toBe(code);
  });
});

describe("one-file tar archives", () => {
  it("round-trips bytes, and GNU tar reads the archive with the right name, mode and content", () => {
    const bytes = Buffer.from(Array.from({ length: 1500 }, (_, i) => i % 251));
    const archive = tarOfFile("tmp/.outpost/bin/outpost-abc", bytes, 0o755);
    expect(archive.length % 512).toBe(0);
    expect(firstFileOf(archive)).toEqual(bytes);
    const listing = execFileSync("tar", ["-tvf", "-"], { input: archive, encoding: "utf8" });
    expect(listing).toMatch(/^-rwxr-xr-x .* 1500 .* tmp\/\.outpost\/bin\/outpost-abc\n$/);
    const content = execFileSync("tar", ["-xOf", "-"], { input: archive });
    expect(content).toEqual(bytes);
  });

  it("skips extended headers and finds nothing in an empty archive", () => {
    const pax = tarOfFile("PaxHeaders/x", Buffer.from("30 path=tmp/x\n"), 0o644);
    pax[156] = "x".charCodeAt(0);
    const file = tarOfFile("tmp/x", Buffer.from("hello"), 0o644);
    const joined = Buffer.concat([pax.subarray(0, 1024), file]);
    expect(firstFileOf(joined)?.toString()).toBe("hello");
    expect(firstFileOf(Buffer.alloc(1024))).toBeUndefined();
  });
});
