// Connection against the real Outpost agent (skipped until `make agent` has built it).
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { assert, describe, expect, it } from "vitest";
import { type Connection, isConnectionLost } from "../src/wire/connection.js";
import { closedAfterEach, heldProcesses, isAlive, rejection } from "./fixtures/connections.js";
import { realAgent } from "./fixtures/real-agent.js";

const openConnection = closedAfterEach();

function connect(options: { silenceLimitMs?: number; pingIntervalMs?: number } = {}): Connection {
  return openConnection({ command: [realAgent], ...options });
}

describe("the real agent", () => {
  it("answers hello with this machine's facts", async () => {
    const connection = connect();
    const info = await connection.info();
    expect(info).toMatchObject({
      protocol: 1,
      os: { linux: "linux", darwin: "macos", android: "android", win32: "windows" }[process.platform as string],
      arch: { x64: "x86_64", arm64: "aarch64" }[process.arch as string],
      home: homedir(),
      tmpdir: tmpdir(),
      cwd: process.cwd(),
      separator: process.platform === "win32" ? "\\" : "/",
      driveCwds: {},
    });
    expect(info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Array.isArray(info.features)).toBe(true);
    expect(isAlive(info.pid)).toBe(true);
    expect(connection.session()).toBe(1);
  });

  it("answers an unknown operation with EINVAL and stays usable", async () => {
    const connection = connect();
    const error = await rejection(connection.request("nope", { x: 1 }));
    expect(error).toMatchObject({ code: "EINVAL", message: "unknown operation nope" });
    expect(isConnectionLost(error)).toBe(false);
    expect((await connection.info()).protocol).toBe(1);
    expect(connection.session()).toBe(1);
  });

  it("restarts after the agent dies; handle-bound requests of the old session fail lost", async () => {
    const connection = connect();
    const { pid } = await connection.info();
    process.kill(pid, "SIGKILL");
    await expect.poll(() => connection.session(), { timeout: 2000 }).toBeUndefined();
    expect(isConnectionLost(await rejection(connection.request("nope", {}, { session: 1 })))).toBe(true);
    const second = await connection.info();
    expect(second.pid).not.toBe(pid);
    expect(connection.session()).toBe(2);
  });

  it("stops the agent on close()", async () => {
    const connection = connect();
    const { pid } = await connection.info();
    await connection.close();
    expect(isAlive(pid)).toBe(false);
  });

  it("with closeGraceMs, close() lets the agent exit on the end of its input before signalling it", async () => {
    for (const [closeGraceMs, expected] of [
      [2_000, []],
      [0, ["SIGTERM"]],
    ] as const) {
      const signals: string[] = [];
      const connection = openConnection({
        closeGraceMs,
        // The real agent, its signals recorded: an agent behind an engine client never sees them.
        launch: async (args) => {
          const child = spawn(realAgent, args, { stdio: "pipe" });
          const kill = child.kill.bind(child);
          child.kill = (signal?: NodeJS.Signals | number) => {
            signals.push(String(signal ?? "SIGTERM"));
            return kill(signal);
          };
          return child;
        },
      });
      const { pid } = await connection.info();
      await connection.close();
      expect(isAlive(pid)).toBe(false);
      expect([closeGraceMs, signals]).toEqual([closeGraceMs, expected]);
    }
  });

  // Slow (beyond the agent's 5 s ping interval): runs with OUTPOST_SLOW_TESTS=1.
  it.runIf(process.env.OUTPOST_SLOW_TESTS)(
    "keeps a quiet connection alive with pings",
    async () => {
      const connection = connect({ silenceLimitMs: 6_000, pingIntervalMs: 500 });
      await connection.info();
      // Beyond one agent ping interval (5 s) without any request: only the agent's pings keep it alive.
      await new Promise((resolve) => setTimeout(resolve, 6_500));
      expect(connection.session()).toBe(1);
    },
    15_000,
  );

  it("maps an error frame with its path", async () => {
    const connection = connect();
    const error = await rejection(connection.request("lstat", { path: "/nonexistent-outpost-path" }));
    expect(error).toMatchObject({ code: "ENOENT", path: "/nonexistent-outpost-path" });
    expect(error.fields.syscall).toBe("lstat");
  });

  it("delivers a cancel sent right behind the request", async () => {
    const connection = connect();
    await connection.info();
    const started = Date.now();
    const error = await rejection(
      connection.request(
        "exec",
        { command: "sleep 5", cwd: "/", env: {}, inheritEnv: true },
        { signal: AbortSignal.abort() },
      ),
    );
    expect(error.code).toBe("aborted");
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("kills a command with a kill-mode cancel", async () => {
    const connection = connect();
    let started: [number, number] | undefined;
    const reply = connection.request(
      "exec",
      { command: "echo started; sleep 5", cwd: "/", env: {}, inheritEnv: true },
      {
        onStart: (id, session) => (started = [id, session]),
        onEvent: () => connection.kill(...started!),
      },
    );
    expect((await reply).json).toEqual({ exitCode: 137 });
  });
});

describe("the memory replies are decoded into", () => {
  const file = async (bytes: Uint8Array) => {
    const dir = await mkdtemp(join(tmpdir(), "outpost-payload-"));
    const path = join(dir, "f.bin");
    await writeFile(path, bytes);
    return { path, dir };
  };
  const bytes = Uint8Array.from({ length: 3000 }, (_, i) => i % 251);

  it("is the array payloadInto names, of the payload's length", async () => {
    const connection = connect();
    const { path, dir } = await file(bytes);
    try {
      let given: Uint8Array | undefined;
      const lengths: number[] = [];
      const reply = await connection.request(
        "readFile",
        { path, max: 4096 },
        {
          payloadInto: (length) => {
            lengths.push(length);
            given = new Uint8Array(length);
            return given;
          },
        },
      );
      expect(lengths).toEqual([bytes.length]);
      expect(reply.payload).toBe(given);
      expect(Buffer.from(reply.payload).equals(Buffer.from(bytes))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("is fresh memory when payloadInto declines or throws, with the same bytes", async () => {
    const connection = connect();
    const { path, dir } = await file(bytes);
    try {
      for (const payloadInto of [() => undefined, () => assert.fail("a chooser that throws")]) {
        const reply = await connection.request("readFile", { path, max: 4096 }, { payloadInto });
        expect(Buffer.from(reply.payload).equals(Buffer.from(bytes))).toBe(true);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("is a view into received memory with transientEvents, and each event's own without", async () => {
    const connection = connect();
    // Three output events at least: three writes, apart in time.
    const command = "printf aaaa; sleep 0.05; printf bbbb; sleep 0.05; printf cccc";
    for (const transientEvents of [true, false]) {
      const owned: boolean[] = [];
      let text = "";
      await connection.request(
        "exec",
        { command, cwd: tmpdir() },
        {
          transientEvents,
          onEvent: (_json, payload) => {
            // Memory of its own is exactly the payload; a view shares the frame's received bytes (its header too).
            owned.push(payload.buffer.byteLength === payload.byteLength);
            text += Buffer.from(payload).toString();
          },
        },
      );
      expect(text).toBe("aaaabbbbcccc");
      expect(owned.length).toBeGreaterThanOrEqual(3);
      expect(owned).toEqual(owned.map(() => !transientEvents));
    }
  });
});

describe("holding the host process", () => {
  it("holds it while a request is pending, after the request's first event too, and lets go when idle", async () => {
    // Agents of earlier tests may still be exiting.
    await expect.poll(heldProcesses, { timeout: 5000 }).toBe(0);
    const connection = connect();
    await connection.info();
    expect(heldProcesses()).toBe(0);
    const during: number[] = [];
    const running = connection.request(
      "exec",
      { command: "printf early; sleep 0.2; printf late", cwd: tmpdir() },
      { onEvent: () => during.push(heldProcesses()) },
    );
    expect(heldProcesses()).toBe(1);
    await running;
    expect(during.length).toBeGreaterThanOrEqual(1);
    expect(during).toEqual(during.map(() => 1));
    expect(heldProcesses()).toBe(0);
  });
});
