// Connection against fake agents (node scripts in fixtures/), covering start, framing, liveness and failures.
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { isConnectionLost } from "../src/wire/connection.js";
import { closedAfterEach, heldProcesses, rejection } from "./fixtures/connections.js";

const FAKE = fileURLToPath(new URL("./fixtures/fake-agent.mjs", import.meta.url));
const PROBE = fileURLToPath(new URL("./fixtures/corrupt-probe.ts", import.meta.url));

function fake(...mode: string[]): string[] {
  return [process.execPath, FAKE, ...mode];
}

function stderrExit(code: number, text: string): string[] {
  return fake("stderr-exit", String(code), Buffer.from(text, "utf8").toString("base64"));
}

const connect = closedAfterEach();

describe("a well-behaved agent", () => {
  it("starts lazily, answers hello and numbers the session", async () => {
    const connection = connect({ command: fake("good") });
    expect(connection.session()).toBeUndefined();
    const info = await connection.info();
    expect(info).toMatchObject({ protocol: 1, version: "fake", os: "linux", arch: "x86_64", separator: "/" });
    expect(info.features).toEqual(["fake"]);
    expect(info.driveCwds).toEqual({});
    expect(typeof info.pid).toBe("number");
    expect(connection.session()).toBe(1);
  });

  it("round-trips JSON and binary payloads into fresh Uint8Arrays", async () => {
    const connection = connect({ command: fake("good") });
    const reply = await connection.request("echo", { value: 42 }, { payload: new Uint8Array([0, 255, 123]) });
    expect(reply.json.echo).toEqual({ value: 42, op: "echo" });
    expect(Object.getPrototypeOf(reply.payload)).toBe(Uint8Array.prototype);
    expect([...reply.payload]).toEqual([0, 255, 123]);
    expect(reply.payload.byteOffset).toBe(0);
    expect(reply.payload.buffer.byteLength).toBe(3);
    expect(reply.session).toBe(1);
  });

  it("sends every string value well-formed", async () => {
    const connection = connect({ command: fake("good") });
    const reply = await connection.request("echo", { text: "a\ud800b", list: ["\udc00"], nested: { ok: "é😀" } });
    expect(reply.json.echo).toEqual({ text: "a\ufffdb", list: ["\ufffd"], nested: { ok: "é😀" }, op: "echo" });
  });

  it("delivers events in order before the result", async () => {
    const connection = connect({ command: fake("good") });
    const seen: [unknown, number[]][] = [];
    await connection.request("events", { count: 5 }, { onEvent: (json, payload) => seen.push([json.n, [...payload]]) });
    expect(seen).toEqual([0, 1, 2, 3, 4].map((n) => [n, [n]]));
  });

  it("survives a throwing event listener", async () => {
    const connection = connect({ command: fake("good") });
    let calls = 0;
    const onEvent = () => {
      calls++;
      throw new Error("listener failed");
    };
    await expect(connection.request("events", { count: 3 }, { onEvent })).resolves.toMatchObject({ json: {} });
    expect(calls).toBe(3);
  });

  it("reports an error frame as a RemoteError with the agent's fields", async () => {
    const connection = connect({ command: fake("good") });
    const error = await rejection(connection.request("nonsense", {}));
    expect(error.code).toBe("EINVAL");
    expect(error.message).toBe("unknown operation nonsense");
    expect(isConnectionLost(error)).toBe(false);
  });

  it("carries large payloads both ways, respecting stdin backpressure and frame order", async () => {
    const connection = connect({ command: fake("good") });
    const big = new Uint8Array(15 * 1024 * 1024).map((_, index) => index % 251);
    const small = Array.from({ length: 4 }, (_, n) => new Uint8Array(3 * 1024 * 1024).fill(n + 1));
    const replies = await Promise.all([
      connection.request("echo", { n: "big" }, { payload: big }),
      ...small.map((payload, n) => connection.request("echo", { n }, { payload })),
    ]);
    expect(Buffer.from(replies[0].payload).equals(Buffer.from(big))).toBe(true);
    replies.slice(1).forEach((reply, n) => {
      expect(reply.json.echo).toMatchObject({ n });
      expect(reply.payload.length).toBe(3 * 1024 * 1024);
      expect(reply.payload.every((byte) => byte === n + 1)).toBe(true);
    });
    const blob = await connection.request("blob", { size: 16 * 1024 * 1024 - 64 * 1024 });
    expect(blob.payload.length).toBe(16 * 1024 * 1024 - 64 * 1024);
    expect(blob.payload.buffer.byteLength).toBe(blob.payload.length);
  });

  it("rejects a request too large for one frame without sending it", async () => {
    const connection = connect({ command: fake("good") });
    const error = await rejection(connection.request("echo", {}, { payload: new Uint8Array(16 * 1024 * 1024) }));
    expect(error.code).toBe("unknown");
    expect(isConnectionLost(error)).toBe(false);
    expect((await connection.request("received", {})).json.ops).toEqual(["hello", "received"]);
  });

  it("numbers requests from 1 per Connection, across sessions", async () => {
    const connection = connect({ command: fake("good") });
    const ids: [number, number][] = [];
    const onStart = (id: number, session: number) => ids.push([id, session]);
    await connection.request("echo", {}, { onStart });
    await expect(connection.request("exit", { code: 0 }, { onStart })).rejects.toThrow();
    await connection.request("echo", {}, { onStart });
    // hello took id 1 and, after the restart, id 4.
    expect(ids).toEqual([
      [2, 1],
      [3, 1],
      [5, 2],
    ]);
  });
});

describe("marker line", () => {
  it("passes trimmed noise before the marker to onLog", async () => {
    const logs: string[] = [];
    const connection = connect({ command: fake("noise"), onLog: (text) => logs.push(text) });
    await connection.info();
    expect(logs).toEqual(["Welcome to fakehost\n\n   last login: never"]);
  });

  it("logs nothing when the marker comes first", async () => {
    const logs: string[] = [];
    const connection = connect({ command: fake("good"), onLog: (text) => logs.push(text) });
    await connection.info();
    expect(logs).toEqual([]);
  });

  it("finds a marker split across the chunk where the noise overflows the search window", async () => {
    // 1 MiB of noise is the search window; the marker's first bytes end the write that crosses it.
    const connection = connect({ command: fake("flood-split", String(1024 * 1024 + 100)) });
    expect((await connection.info()).protocol).toBe(1);
  });

  it("finds the marker after megabytes of noise", async () => {
    const logs: string[] = [];
    const connection = connect({ command: fake("flood", String(3 * 1024 * 1024)), onLog: (text) => logs.push(text) });
    const info = await connection.info();
    expect(info.protocol).toBe(1);
    // Only the end of the flood is kept while searching, never megabytes of it.
    expect(logs.join("").length).toBeLessThan(2 * 1024 * 1024);
    expect((await connection.request("echo", { v: 1 })).json.echo).toEqual({ v: 1, op: "echo" });
  });
});

describe("start failures", () => {
  it("fails the start soon after the agent exits, even while a descendant holds its pipes", async () => {
    const connection = connect({ command: fake("orphan-exit") });
    const started = performance.now();
    const error = await rejection(connection.info());
    expect(isConnectionLost(error)).toBe(true);
    const message = String((error as Error).message);
    const orphan = Number(/orphan (\d+)/.exec(message)?.[1]);
    if (orphan > 0) process.kill(orphan);
    expect(message).toMatch(/exited with code 3 before it was ready/);
    // The exit is waited on for 2 s at most to drain stderr, not for the descendant's 10 s.
    expect(performance.now() - started).toBeLessThan(6000);
    expect(orphan).toBeGreaterThan(0);
  });

  it("includes the end of stderr when the agent exits before it is ready", async () => {
    const connection = connect({ command: stderrExit(255, "ssh: Permission denied (publickey).\r\n") });
    const error = await rejection(connection.info());
    expect(error.message).toBe(
      "outpost agent exited with code 255 before it was ready\nremote stderr:\nssh: Permission denied (publickey).",
    );
    expect(error.code).toBe("unknown");
    expect(isConnectionLost(error)).toBe(true);
  });

  it("keeps the message unchanged when stderr has nothing printable", async () => {
    const connection = connect({ command: stderrExit(3, "\u001b[31m\u001b[0m\r\n \t\n\u0007") });
    const error = await rejection(connection.info());
    expect(error.message).toBe("outpost agent exited with code 3 before it was ready");
  });

  it("drops terminal escapes and C0/C1 controls, keeping tabs and non-ASCII text", async () => {
    const raw = "\u001b[1;31mError:\u001b[0m bad\tthing \u0007\u0001 café\u0085 ok   \r\nsecond\rthird\n\n   \n";
    const connection = connect({ command: stderrExit(1, raw) });
    const error = await rejection(connection.info());
    expect(error.message).toBe(
      "outpost agent exited with code 1 before it was ready\nremote stderr:\nError: bad\tthing  café ok\nsecond\nthird",
    );
  });

  it("keeps only the last 20 lines", async () => {
    const lines = Array.from({ length: 30 }, (_, n) => `line ${n + 1}`);
    const connection = connect({ command: stderrExit(1, lines.join("\n")) });
    const error = await rejection(connection.info());
    expect(error.message.split("\nremote stderr:\n")[1]).toBe(lines.slice(10).join("\n"));
  });

  it("keeps only the last 2000 characters", async () => {
    const long = Array.from({ length: 5000 }, (_, n) => String(n % 10)).join("");
    const connection = connect({ command: stderrExit(1, long) });
    const error = await rejection(connection.info());
    expect(error.message.split("\nremote stderr:\n")[1]).toBe(long.slice(-2000));
  });

  it("passes stderr to onLog unchanged", async () => {
    const raw = "\u001b[31mboom\u001b[0m\r\nsecond\n";
    const logs: string[] = [];
    const connection = connect({ command: stderrExit(1, raw), onLog: (text) => logs.push(text) });
    await rejection(connection.info());
    expect(logs.join("")).toBe(raw);
  });

  it("reports only the stderr of the attempt that failed", async () => {
    let attempt = 0;
    const connection = connect({
      command: async () => stderrExit(1, attempt++ === 0 ? "first attempt failed" : "second attempt failed"),
    });
    expect((await rejection(connection.info())).message).toContain("first attempt failed");
    const second = await rejection(connection.info());
    expect(second.message).toBe(
      "outpost agent exited with code 1 before it was ready\nremote stderr:\nsecond attempt failed",
    );
  });

  it("keeps the fields of a hello the agent refused, and is not lost", async () => {
    const connection = connect({ command: fake("refuse") });
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = await rejection(connection.info());
      expect(error.code).toBe("EACCES");
      expect(error.path).toBe("/etc/agent");
      expect(error.message).toBe("EACCES: permission denied, open '/etc/agent'");
      expect(error.fields).toMatchObject({ syscall: "open", hint: "kept" });
      expect(isConnectionLost(error)).toBe(false);
      expect(connection.session()).toBeUndefined();
    }
  });

  it("reports an agent that cannot be started as a lost spawn error", async () => {
    const connection = connect({ command: ["/nonexistent/outpost-agent"] });
    const error = await rejection(connection.request("echo", {}));
    expect(error.code).toBe("spawn_error");
    expect(error.message).toContain("ENOENT");
    expect(isConnectionLost(error)).toBe(true);
  });

  it("reports an empty command as a lost spawn error", async () => {
    const connection = connect({ command: [] });
    const error = await rejection(connection.info());
    expect(error.code).toBe("spawn_error");
    expect(isConnectionLost(error)).toBe(true);
  });

  it("evaluates a command function at every start; its failure fails only that start", async () => {
    let calls = 0;
    const connection = connect({
      command: async () => {
        calls++;
        if (calls === 1) throw new Error("no route to host");
        return fake("good");
      },
    });
    const error = await rejection(connection.request("echo", {}));
    expect(error).toMatchObject({ code: "spawn_error", message: "no route to host" });
    expect(isConnectionLost(error)).toBe(true);
    expect((await connection.request("echo", { v: 2 })).json.echo).toEqual({ v: 2, op: "echo" });
    expect(calls).toBe(2);
    expect(connection.session()).toBe(1);
  });

  it("shares one start between concurrent requests", async () => {
    let calls = 0;
    const connection = connect({
      command: async () => {
        calls++;
        return fake("good");
      },
    });
    await Promise.all([connection.info(), connection.request("echo", {}), connection.request("echo", {})]);
    expect(calls).toBe(1);
  });

  it.each([
    ["2", "Unsupported protocol 2"],
    ["missing", "Unsupported protocol undefined"],
    ['"1"', "Unsupported protocol 1"],
  ])("refuses protocol %s as lost", async (value, message) => {
    const connection = connect({ command: fake("protocol", value) });
    const error = await rejection(connection.info());
    expect(error.message).toBe(message);
    expect(isConnectionLost(error)).toBe(true);
  });

  it("gives up on an agent that never answers hello", async () => {
    const connection = connect({ command: fake("mute"), startTimeoutMs: 300 });
    const error = await rejection(connection.info());
    expect(error.message).toBe("outpost agent did not answer within 0.3 s");
    expect(isConnectionLost(error)).toBe(true);
  });
});

describe("corrupt frames", () => {
  it("tear the session down as lost without crashing the host process", async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", PROBE], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
    });
    expect(stderr).toBe("");
    const cases = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(cases).toHaveLength(12);
    for (const outcome of cases) {
      expect(outcome).toEqual({
        phase: outcome.phase,
        kind: outcome.kind,
        settled: "rejected",
        name: "RemoteError",
        code: "unknown",
        message: "Corrupt frame from outpost agent",
        lost: true,
        after: outcome.phase === "hello" ? "failed" : "started",
      });
    }
  });
});

describe("liveness", () => {
  it("counts 30 s (here 300 ms) of silence as a lost connection", async () => {
    const connection = connect({ command: fake("good"), silenceLimitMs: 300, pingIntervalMs: 50 });
    await connection.info();
    const started = Date.now();
    const error = await rejection(connection.request("wait", {}));
    expect(error.message).toBe("outpost agent connection timed out");
    expect(isConnectionLost(error)).toBe(true);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(connection.session()).toBeUndefined();
  });

  it("stays up while the agent pings", async () => {
    // Margins are wide so a loaded machine stalling the fake for a moment does not fail the test.
    const connection = connect({ command: fake("ping", "50"), silenceLimitMs: 1000, pingIntervalMs: 50 });
    const controller = new AbortController();
    const reply = connection.request("wait", {}, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(connection.session()).toBe(1);
    controller.abort();
    expect((await reply).json.cancel).toEqual({});
  });

  it("fails pending requests as soon as the agent exits, even while a child keeps its pipes open", async () => {
    const connection = connect({ command: fake("good") });
    await connection.info();
    const started = Date.now();
    const waiting = rejection(connection.request("wait", {}));
    const error = await rejection(connection.request("orphan", {}));
    expect(error.message).toBe("outpost agent connection lost");
    expect(isConnectionLost(error)).toBe(true);
    expect(isConnectionLost(await waiting)).toBe(true);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe("cancel and kill", () => {
  it("sends a cancel right behind a request whose signal is already aborted", async () => {
    const connection = connect({ command: fake("good") });
    const reply = await connection.request("wait", {}, { signal: AbortSignal.abort() });
    expect(reply.json.cancel).toEqual({});
  });

  it("sends a cancel when the signal aborts mid-request", async () => {
    const connection = connect({ command: fake("good") });
    const controller = new AbortController();
    const reply = connection.request("wait", {}, { signal: controller.signal });
    await connection.request("echo", {});
    controller.abort();
    expect((await reply).json.cancel).toEqual({});
  });

  it("kills with a {mode:'kill'} cancel only in the live session", async () => {
    const connection = connect({ command: fake("good") });
    let started: [number, number] | undefined;
    const reply = connection.request("wait", {}, { onStart: (id, session) => (started = [id, session]) });
    await connection.request("echo", {});
    const [id, session] = started!;
    connection.kill(id, session + 1);
    connection.kill(id + 100, session + 1);
    expect((await connection.request("received", {})).json.cancels).toEqual([]);
    connection.kill(id, session);
    expect((await reply).json.cancel).toEqual({ mode: "kill" });
  });
});

describe("sessions", () => {
  it("never sends a handle-bound request of a lost session to the new agent", async () => {
    const connection = connect({ command: fake("good") });
    const { pid } = await connection.info();
    const first = connection.session()!;
    process.kill(pid, "SIGKILL");
    await expect.poll(() => connection.session(), { timeout: 2000 }).toBeUndefined();
    const error = await rejection(connection.request("echo", {}, { session: first }));
    expect(isConnectionLost(error)).toBe(true);
    const received = await connection.request("received", {});
    expect(received.session).toBe(2);
    expect(received.json.ops).toEqual(["hello", "received"]);
    const stale = await rejection(connection.request("echo", {}, { session: first }));
    expect(isConnectionLost(stale)).toBe(true);
    expect((await connection.request("echo", { bound: true }, { session: 2 })).json.echo).toMatchObject({
      bound: true,
    });
  });

  it("fails pending requests of a lost session and restarts on the next request", async () => {
    const connection = connect({ command: fake("good") });
    const waiting = connection.request("wait", {});
    const exit = connection.request("exit", { code: 1 });
    expect(isConnectionLost(await rejection(waiting))).toBe(true);
    expect(isConnectionLost(await rejection(exit))).toBe(true);
    expect((await connection.request("echo", {})).session).toBe(2);
  });
});

describe("the agent's output ending", () => {
  it("fails pending requests as lost while the agent process lives on", async () => {
    const connection = connect({ command: fake("good") });
    const { pid } = await connection.info();
    const waiting = rejection(connection.request("wait", {}));
    const closing = rejection(connection.request("close-stdout", {}));
    expect(isConnectionLost(await closing)).toBe(true);
    expect(isConnectionLost(await waiting)).toBe(true);
    expect(connection.session()).toBeUndefined();
    // The next request starts a new agent.
    const second = await connection.info();
    expect(second.pid).not.toBe(pid);
  });
});

describe("close", () => {
  it("rejects pending and later requests with 'Connection closed', not lost", async () => {
    const connection = connect({ command: fake("good") });
    const { pid } = await connection.info();
    const waiting = rejection(connection.request("wait", {}));
    await connection.request("echo", {});
    await connection.close();
    const pending = await waiting;
    expect(pending).toMatchObject({ code: "unknown", message: "Connection closed" });
    expect(isConnectionLost(pending)).toBe(false);
    const later = await rejection(connection.request("echo", {}));
    expect(later).toMatchObject({ code: "unknown", message: "Connection closed" });
    expect(isConnectionLost(later)).toBe(false);
    // A request bound to the closed session (a handle's) is closed too, not lost.
    const bound = await rejection(connection.request("echo", {}, { session: 1 }));
    expect(bound).toMatchObject({ code: "unknown", message: "Connection closed" });
    expect(isConnectionLost(bound)).toBe(false);
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it("fails a start closed before the agent process even started, and starts none later", async () => {
    const connection = connect({ command: fake("good") });
    const starting = rejection(connection.info());
    await connection.close();
    expect(await starting).toMatchObject({ code: "unknown", message: "Connection closed" });
    expect(await rejection(connection.info())).toMatchObject({ code: "unknown", message: "Connection closed" });
    expect(connection.session()).toBeUndefined();
  });

  it("kills an agent a launcher was still starting when close() ran", async () => {
    let launched: ChildProcessWithoutNullStreams | undefined;
    let release: (() => void) | undefined;
    const connection = connect({
      launch: async (args) => {
        // The launcher (an SSH transport, say) is still at work when close() runs.
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        const [command, ...rest] = fake("good");
        launched = spawn(command, [...rest, ...args], { stdio: "pipe" });
        return launched;
      },
    });
    const starting = rejection(connection.info());
    await expect.poll(() => release).toBeDefined();
    await connection.close();
    release?.();
    expect(await starting).toMatchObject({ code: "unknown", message: "Connection closed" });
    await expect.poll(() => launched?.exitCode !== null || launched?.signalCode !== null).toBe(true);
    expect(launched?.killed).toBe(true);
  });

  it("ignores a kill for a command of no live session", async () => {
    const connection = connect({ command: fake("good") });
    expect(() => connection.kill(1, 1)).not.toThrow();
    await connection.info();
    expect(() => connection.kill(1, 7)).not.toThrow();
    expect((await connection.request("echo", {})).session).toBe(1);
  });

  it("fails a start in progress", async () => {
    const connection = connect({ command: fake("mute") });
    const starting = rejection(connection.info());
    await new Promise((resolve) => setTimeout(resolve, 100));
    await connection.close();
    expect(await starting).toMatchObject({ code: "unknown", message: "Connection closed" });
  });
});

describe("request deadlines", () => {
  it("has none by default: an unanswered request keeps waiting", async () => {
    const connection = connect({ command: fake("good") });
    let settled = false;
    const reply = connection.request("wait", {}).then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false);
    await connection.close();
    await reply;
  });

  it("fails a request that is not answered within timeoutMs as lost, cancels it and ignores a late answer", async () => {
    const connection = connect({ command: fake("good") });
    const error = await rejection(connection.request("wait", {}, { timeoutMs: 100 }));
    expect(isConnectionLost(error)).toBe(true);
    expect(error.fields.timedOut).toBe(true);
    expect(error.code).toBe("unknown");
    expect(error.message).toBe("outpost agent did not answer wait within 100 ms");
    // The cancel reached the agent (which answered it, too late), and the connection keeps working.
    const received = await connection.request("received", {});
    expect(received.json.cancels).toHaveLength(1);
    expect((await connection.request("echo", { value: 1 })).json.echo).toEqual({ value: 1, op: "echo" });
  });

  it("does not bound the agent's start by requestTimeoutMs (the start timeout does)", async () => {
    // No agent answers hello within 1 ms of being spawned; the start must still succeed.
    const connection = connect({ command: fake("good"), requestTimeoutMs: 1 });
    expect((await connection.info()).protocol).toBe(1);
  });

  it("applies the connection's requestTimeoutMs to every request but exec and watch", async () => {
    const connection = connect({ command: fake("good"), requestTimeoutMs: 100 });
    const error = await rejection(connection.request("wait", {}));
    expect(error.fields.timedOut).toBe(true);
    // An exec lasts as long as its command: the default deadline does not apply.
    const controller = new AbortController();
    let settled = false;
    const exec = connection
      .request("exec", { command: JSON.stringify({ waitCancel: true }) }, { signal: controller.signal })
      .catch((thrown: unknown) => thrown)
      .finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false);
    controller.abort();
    expect(((await exec) as { code?: string }).code).toBe("aborted");
    // A request's own timeoutMs overrides the default: Infinity means none.
    const echo = await connection.request("echo", { value: 2 }, { timeoutMs: Number.POSITIVE_INFINITY });
    expect(echo.json.echo).toEqual({ value: 2, op: "echo" });
  });
});

describe("a settled request", () => {
  it("leaves nothing behind: its deadline and its abort listener send no cancel afterwards", async () => {
    const connection = connect({ command: fake("good") });
    const controller = new AbortController();
    await connection.request("echo", { value: 1 }, { timeoutMs: 50, signal: controller.signal });
    // A deadline still running after the answer would cancel the finished id once it expired.
    await new Promise((resolve) => setTimeout(resolve, 120));
    // An abort listener still attached would send a cancel for it now.
    controller.abort();
    expect(controller.signal.aborted).toBe(true);
    expect((await connection.request("received", {})).json.cancels).toEqual([]);
  });
});

describe("holding the host process", () => {
  it("holds on again for a background request cancelled after its first event, until it ends", async () => {
    await expect.poll(heldProcesses, { timeout: 5000 }).toBe(0);
    const connection = connect({ command: fake("good") });
    await connection.info();
    const controller = new AbortController();
    let firstEvent: () => void = () => {};
    const eventSeen = new Promise<void>((resolve) => (firstEvent = resolve));
    const reply = connection.request(
      "script",
      { script: { events: [{ text: "x" }], waitCancel: true } },
      { background: true, signal: controller.signal, onEvent: () => firstEvent() },
    );
    await eventSeen;
    expect(heldProcesses()).toBe(0);
    // Whoever cancels waits for the request to end: until then the process must stay alive.
    controller.abort();
    expect(heldProcesses()).toBe(1);
    expect((await rejection(reply)).code).toBe("aborted");
    expect(heldProcesses()).toBe(0);
  });

  it("lets a background request go at its first event; a foreground one holds on until it ends", async () => {
    // Agents of earlier tests may still be exiting.
    await expect.poll(heldProcesses, { timeout: 5000 }).toBe(0);
    const connection = connect({ command: fake("good") });
    await connection.info();
    expect(heldProcesses()).toBe(0);
    for (const background of [true, false]) {
      const during: number[] = [];
      await connection.request("events", { count: 2 }, { background, onEvent: () => during.push(heldProcesses()) });
      expect(during).toEqual(background ? [0, 0] : [1, 1]);
      expect(heldProcesses()).toBe(0);
    }
  });
});
