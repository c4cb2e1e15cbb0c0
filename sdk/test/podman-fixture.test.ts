/**
 * The podman fixture itself: each root filesystem runs, the container options do what the end-to-end tests rely
 * on, and `dispose()` leaves no container, mount or directory behind, nor anything in the machine's own podman
 * places.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isClean, podmanLeftovers, reportDir } from "../../tools/podman-leftovers.js";
import { connectContainer, getOrThrow } from "../src/index.js";
import { PODMAN_CACHE, type Podman, startPodman } from "./fixtures/podman.js";

/** Where podman and runc keep state by default: the fixture must not create any of them. */
const MACHINE_PLACES = [
  "/var/lib/containers",
  "/run/containers",
  "/run/libpod",
  "/run/runc",
  "/etc/cni/net.d/cni.lock",
];

describe("podman fixture", () => {
  const before = new Map(MACHINE_PLACES.map((place) => [place, existsSync(place)]));
  let podman: Podman | undefined;
  afterAll(async () => {
    await podman?.dispose();
  }, 120_000);

  it("runs the busybox, dash and shell-less root filesystems", async () => {
    podman = await startPodman();
    const busybox = await podman.start({ rootfs: "busybox" });
    const probe = await podman.run(["exec", busybox, "sh", "-c", "uname -sm; ulimit -n; id -u; readlink /bin/sh"]);
    expect(probe.stdout).toBe("Linux x86_64\n20000\n0\nbusybox\n");

    const dash = await podman.start({ rootfs: "dash" });
    const dashProbe = await podman.run(["exec", dash, "sh", "-c", 'uname -s; echo "$0"; sha256sum /dev/null']);
    expect(dashProbe.stdout).toBe(
      "Linux\nsh\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  /dev/null\n",
    );
    expect(existsSync("/bin/busybox")).toBe(true);
    await expect(podman.run(["exec", dash, "busybox", "true"])).rejects.toThrow(/not found/);

    const noshell = await podman.start({ rootfs: "noshell" });
    await expect(podman.run(["exec", noshell, "sh", "-c", "true"])).rejects.toThrow(/not found/);
    expect(await podman.containers()).toEqual(expect.arrayContaining([busybox, dash, noshell]));
  });

  it("honours user, read-only root, mounts and env; stop and remove", async () => {
    podman ??= await startPodman();
    const name = await podman.start({
      rootfs: "busybox",
      user: "1000:1000",
      readOnly: true,
      mounts: [podman.dir],
      env: { OUTPOST_FIXTURE: "yes" },
    });
    const script = 'id -u; echo "$HOME $OUTPOST_FIXTURE"; touch /x 2>&1; touch /tmp/y && echo tmp-ok; ls "$1"';
    const out = await podman.run(["exec", name, "sh", "-c", script, "sh", podman.dir]);
    expect(out.stdout).toMatch(/^1000\n\/home\/app yes\ntouch: \/x: Read-only file system\ntmp-ok\n/);
    expect(out.stdout).toContain("containers.conf");
    await podman.stop(name);
    await expect(podman.run(["exec", name, "true"])).rejects.toThrow(/container state improper/);
    await podman.remove(name);
    await expect(podman.run(["exec", name, "true"])).rejects.toThrow(/no such container/);
  });

  it("dispose removes every container, mount and file, and never touched the machine's podman", async () => {
    podman ??= await startPodman();
    await podman.start({ rootfs: "busybox" });
    const { dir } = podman;
    await podman.dispose();
    podman = undefined;
    expect(existsSync(dir)).toBe(false);
    expect(readFileSync("/proc/self/mounts", "utf8")).not.toContain(dir);
    expect(process.env.CONTAINERS_CONF).toBeUndefined();
    for (const place of MACHINE_PLACES) expect([place, existsSync(place)]).toEqual([place, before.get(place)]);
  });

  it("dispose leaves nothing when a test never closed its agent", async () => {
    const own = await startPodman();
    const name = await own.start({ rootfs: "busybox", mounts: [own.dir] });
    // An env left open, as by a test that failed before its close(): its podman exec and agent still run.
    getOrThrow(await connectContainer(name, { engine: "podman" }));
    expect((await podmanLeftovers(own.dir)).processes.join("\n")).toMatch(/podman exec -i/);
    await own.dispose();
    expect(await podmanLeftovers(own.dir)).toEqual({ processes: [], mounts: [], containers: [] });
    expect(existsSync(own.dir)).toBe(false);
  });

  it("dispose ends and leaves nothing when podman rm hangs (its state database held locked)", async () => {
    const own = await startPodman({ removeTimeoutMs: 2_000 });
    await own.start({ rootfs: "busybox" });
    // A real hang of podman: every podman command waits for the lock of the state database, here held by flock
    // (a process of the fixture: its argv names the fixture's directory).
    const holder = spawn("flock", [join(own.dir, "storage/libpod/bolt_state.db"), "sleep", "600"], { stdio: "ignore" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await own.dispose();
    const left = await podmanLeftovers(own.dir);
    expect(isClean(left), JSON.stringify(left)).toBe(true);
    expect(existsSync(own.dir)).toBe(false);
    expect(holder.exitCode !== null || holder.signalCode !== null || (await exited(holder))).toBe(true);
    // The report names the stopped command and holds podman's stacks: where it waited.
    const report = join(reportDir(PODMAN_CACHE), basename(own.dir));
    const text = readFileSync(report, "utf8");
    expect(text).toContain("podman rm -a -f -t 0 did not finish within 2000 ms");
    expect(text).toMatch(/goroutine \d+/);
    expect(text).toContain("bbolt");
    // This file's own report, not one for the end of the run to print.
    await rm(report, { force: true });
  }, 60_000);
});

function exited(child: ReturnType<typeof spawn>): Promise<boolean> {
  return new Promise((resolve) => {
    child.once("exit", () => resolve(true));
    setTimeout(() => resolve(false), 2_000);
  });
}
