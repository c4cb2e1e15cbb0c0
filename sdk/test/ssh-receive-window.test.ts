/**
 * keepReceiveWindow against Debian's sshd on 127.0.0.1, on an ssh2 client opened here: it pins the ssh2 internals it
 * relies on (it returns true only when they are there), the server may send the whole window ahead of a consumer
 * that has read nothing (ssh2 alone stops it at 2 MiB), and a stream much longer than the window arrives whole
 * through its top-ups (ssh2 drops data that comes with no window left, so a count off by one would lose bytes).
 */
import { readFileSync } from "node:fs";
import type { ClientChannel } from "ssh2";
import { Client } from "ssh2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_RECEIVE_WINDOW, keepReceiveWindow } from "../src/ssh/receive-window.js";
import { type Sshd, startSshd } from "./fixtures/sshd.js";

const MiB = 1024 * 1024;
let sshd: Sshd;

beforeAll(async () => {
  sshd = await startSshd();
});

afterAll(async () => {
  await sshd?.stop();
});

async function withClient(use: (client: Client) => Promise<void>): Promise<void> {
  const client = new Client();
  await new Promise<void>((resolve, reject) => {
    client.once("ready", resolve).once("error", reject);
    client.connect({
      host: "127.0.0.1",
      port: sshd.port,
      username: sshd.target.slice(0, sshd.target.indexOf("@")),
      privateKey: readFileSync(sshd.clientKey),
      hostVerifier: () => true,
    });
  });
  try {
    await use(client);
  } finally {
    client.end();
  }
}

function exec(client: Client, command: string): Promise<ClientChannel> {
  return new Promise((resolve, reject) =>
    client.exec(command, (error, channel) => (error ? reject(error) : resolve(channel))),
  );
}

/** Waits until `done()` holds, checking every 20 ms, for at most `ms`. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (done()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return done();
}

async function drain(channel: ClientChannel): Promise<number> {
  let bytes = 0;
  channel.stderr.resume();
  for await (const chunk of channel) bytes += (chunk as Buffer).length;
  return bytes;
}

describe("keepReceiveWindow", () => {
  it("lets the server send the whole window ahead of a consumer that has read nothing yet", async () => {
    await withClient(async (client) => {
      const channel = await exec(client, "head -c 12582912 /dev/zero");
      expect(keepReceiveWindow(channel, AGENT_RECEIVE_WINDOW)).toBe(true);
      // Nothing reads the channel: all 12 MiB arrive anyway (with ssh2's own window, 2 MiB would).
      expect(await until(() => channel.readableLength === 12 * MiB, 20_000)).toBe(true);
      expect(await drain(channel)).toBe(12 * MiB);
    });
  });

  it("stops the server at the window when nothing reads, as ssh2's own window does", async () => {
    await withClient(async (client) => {
      const channel = await exec(client, "head -c 12582912 /dev/zero");
      expect(keepReceiveWindow(channel, 4 * MiB)).toBe(true);
      await until(() => channel.readableLength >= 4 * MiB, 20_000);
      // Time for more to come if the window let it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(channel.readableLength).toBe(4 * MiB);
      expect(await drain(channel)).toBe(12 * MiB);
    });
  });

  it("delivers a stream many windows long whole", async () => {
    await withClient(async (client) => {
      const channel = await exec(client, "head -c 104857600 /dev/zero");
      expect(keepReceiveWindow(channel, 4 * MiB)).toBe(true);
      expect(await drain(channel)).toBe(100 * MiB);
    });
  });

  it("leaves a channel that is not ssh2's alone", () => {
    expect(keepReceiveWindow({} as ClientChannel, AGENT_RECEIVE_WINDOW)).toBe(false);
  });
});
