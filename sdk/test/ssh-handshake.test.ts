/**
 * Servers that end the connection during the SSH handshake, on a real loopback TCP socket: ssh2 then reports only
 * `close` (no `error`) and its handshake timer stops, so a client that listened for errors alone would wait forever.
 * Every such end must fail the call as `connect`, at once.
 */
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { SshEnvOptions } from "../src/index.js";
import { connectSsh, scanHostKey } from "../src/index.js";

let server: Server | undefined;
afterEach(async () => {
  await new Promise((done) => (server ? server.close(done) : done(undefined)));
  server = undefined;
});

/** A server that greets (or not) and hangs up; returns its port. */
async function hangingUp(greet: (socket: Socket) => void): Promise<number> {
  const listening = createServer((socket) => {
    // Read what the client sends, so the client's own end of the connection is seen and the socket closes.
    socket.resume();
    greet(socket);
  });
  server = listening;
  await new Promise<void>((done) => listening.listen(0, "127.0.0.1", done));
  const address = listening.address();
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

// A long connect timeout, so that only the hang-up can end the call within the test's time.
const options: SshEnvOptions = {
  configFile: false,
  agent: false,
  knownHostsFile: "/nonexistent/kh",
  connectTimeout: 60,
};

describe("a server that hangs up during the handshake", () => {
  it.each([
    ["after its version line", (socket: Socket) => socket.end("SSH-2.0-OpenSSH_9.2\r\n")],
    ["before saying anything", (socket: Socket) => socket.end()],
    ["with a reset", (socket: Socket) => socket.resetAndDestroy()],
  ])(
    "%s fails the scan and the connection as connect, at once",
    async (_, greet) => {
      const port = await hangingUp(greet);
      const scanned = await scanHostKey(`me@127.0.0.1:${port}`, options);
      expect(scanned.ok ? "ok" : scanned.error.code).toBe("connect");
      const connected = await connectSsh(`me@127.0.0.1:${port}`, options);
      expect(connected.ok ? "ok" : connected.error.code).toBe("connect");
      // A client that missed the hang-up waits for the connect timeout (60 s), past this test's own.
    },
    10_000,
  );
});
