/**
 * SshAgentProcess, the adapter that makes an SSH exec channel look like the child process `Connection` spawns:
 * the channel's exit status becomes `exitCode`/`signalCode`, `exit` comes once and before `close`, a dropped client
 * closes it, and `kill` closes the channel and lets go of the shared connection. The channel and route are stand-ins here (plain emitters
 * recording calls); ssh.e2e.test.ts runs the same class over a real sshd.
 */
import { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import { PassThrough } from "node:stream";
import type { Client, ClientChannel } from "ssh2";
import { describe, expect, it } from "vitest";
import { SshAgentProcess } from "../src/ssh/agent-process.js";
import type { OpenRoute } from "../src/ssh/client.js";
import type { Lease } from "../src/ssh/route-pool.js";

interface Rig {
  process: SshAgentProcess;
  channel: EventEmitter & { stderr: PassThrough };
  client: EventEmitter;
  calls: string[];
  events: unknown[][];
}

function rig(): Rig {
  const calls: string[] = [];
  const channel = Object.assign(new PassThrough(), {
    stderr: new PassThrough(),
    close: () => calls.push("channel.close"),
  });
  const client = new EventEmitter();
  const route = {
    client: client as unknown as Client,
    clients: [client as unknown as Client],
    socket: { ref: () => calls.push("socket.ref"), unref: () => calls.push("socket.unref") } as unknown as Socket,
    close: () => calls.push("release"),
  } satisfies OpenRoute;
  const lease: Lease = {
    route,
    exec: async () => {
      throw new Error("not used");
    },
    hold: () => lease,
    keepAlive: (wanted) => calls.push(wanted ? "keepAlive" : "letGo"),
    release: () => calls.push("release"),
  };
  const process = new SshAgentProcess(lease, channel as unknown as ClientChannel);
  const events: unknown[][] = [];
  process.on("exit", (...args: unknown[]) => events.push(["exit", ...args]));
  process.on("close", (...args: unknown[]) => events.push(["close", ...args]));
  return { process, channel, client, calls, events };
}

describe("SshAgentProcess", () => {
  it("uses the channel's streams as its stdio", () => {
    const { process, channel } = rig();
    expect(process.stdin).toBe(channel);
    expect(process.stdout).toBe(channel);
    expect(process.stderr).toBe(channel.stderr);
  });

  it("reports the channel's exit status, then its close, each once", () => {
    const { process, channel, calls, events } = rig();
    expect([process.exitCode, process.signalCode]).toEqual([null, null]);
    channel.emit("exit", 3);
    expect([process.exitCode, process.signalCode]).toEqual([3, null]);
    expect(events).toEqual([["exit", 3, null]]);
    expect(calls).toEqual([]);
    channel.emit("close");
    channel.emit("close");
    expect(events).toEqual([
      ["exit", 3, null],
      ["close", 3, null],
    ]);
    expect(calls).toEqual(["release"]);
  });

  it("names a signal the way Node does, and keeps a non-number code as null", () => {
    const { process, channel, events } = rig();
    channel.emit("exit", null, "KILL");
    expect([process.exitCode, process.signalCode]).toEqual([null, "SIGKILL"]);
    expect(events).toEqual([["exit", null, "SIGKILL"]]);
    const other = rig();
    other.channel.emit("exit", "3" as unknown as number, 9 as unknown as string);
    expect([other.process.exitCode, other.process.signalCode]).toEqual([null, null]);
  });

  it("emits exit before close when the channel closes without an exit status", () => {
    const { channel, calls, events } = rig();
    channel.emit("close");
    expect(events).toEqual([
      ["exit", null, null],
      ["close", null, null],
    ]);
    expect(calls).toEqual(["release"]);
  });

  it.each(["close", "error"])("closes when the SSH client emits %s, without the channel's close", (event) => {
    const { client, calls, events } = rig();
    client.emit(event, new Error("dropped"));
    expect(events).toEqual([
      ["exit", null, null],
      ["close", null, null],
    ]);
    expect(calls).toEqual(["release"]);
    client.emit("close");
    expect(events).toHaveLength(2);
  });

  it("kill closes the channel and, after this turn, lets go of the connection, once", async () => {
    const { process, channel, calls, events } = rig();
    expect(process.kill()).toBe(true);
    expect(calls).toEqual(["channel.close"]);
    expect(process.kill()).toBe(false);
    await Promise.resolve();
    expect(calls).toEqual(["channel.close", "release"]);
    expect(events.map((event) => event[0])).toEqual(["exit", "close"]);
    channel.emit("close");
    calls.length = 0;
    expect(process.kill()).toBe(false);
    expect(calls).toEqual([]);
  });

  it("ref and unref hold and release the SSH connection's socket", () => {
    const { process, calls } = rig();
    process.ref();
    process.unref();
    expect(calls).toEqual(["keepAlive", "letGo"]);
  });
});
