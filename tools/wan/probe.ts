/**
 * What the rig's path measures like, with tools that are not Outpost: `ping` for the round trip and loss, and a
 * plain TCP stream for the rate (a Node sink or source in the server namespace, the client here).
 */
import { execFile, spawn } from "node:child_process";
import { connect } from "node:net";
import { promisify } from "node:util";
import { rig } from "./link.js";

const run = promisify(execFile);

export interface PingResult {
  sent: number;
  received: number;
  minMs: number;
  avgMs: number;
  maxMs: number;
}

/** `ping -c count -i interval` to the server; fails, naming the package, if ping is missing. */
export async function ping(count: number, intervalSeconds: number): Promise<PingResult> {
  const { stdout } = await run(
    "ping",
    ["-n", "-q", "-c", String(count), "-i", String(intervalSeconds), "-W", "2", rig().server],
    { timeout: (count * intervalSeconds + 10) * 1000 },
  ).catch((error: NodeJS.ErrnoException & { stdout?: string }) => {
    if (error.code === "ENOENT") throw new Error("ping is missing: apt-get install iputils-ping");
    // ping exits 1 when some replies were lost; its summary is still on stdout.
    if (typeof error.stdout === "string" && error.stdout.includes("transmitted")) return { stdout: error.stdout };
    throw error;
  });
  const counts = stdout.match(/(\d+) packets transmitted, (\d+) received/);
  const times = stdout.match(/= ([\d.]+)\/([\d.]+)\/([\d.]+)/);
  if (!counts) throw new Error(`ping: no summary in ${stdout}`);
  return {
    sent: Number(counts[1]),
    received: Number(counts[2]),
    minMs: times ? Number(times[1]) : Number.NaN,
    avgMs: times ? Number(times[2]) : Number.NaN,
    maxMs: times ? Number(times[3]) : Number.NaN,
  };
}

/**
 * The server end of a bulk stream, run by Node in the server namespace: the first byte says the direction ("u":
 * the client uploads, the server answers "k" once it has all of it; "d": the server sends the bytes and closes),
 * then 8 bytes of size.
 */
const BULK_SERVER = `
const net = require("node:net");
const server = net.createServer((socket) => {
  let header = Buffer.alloc(0), mode, size, got = 0;
  socket.on("data", (chunk) => {
    if (mode === undefined) {
      header = Buffer.concat([header, chunk]);
      if (header.length < 9) return;
      mode = String.fromCharCode(header[0]);
      size = Number(header.readBigUInt64BE(1));
      chunk = header.subarray(9);
      if (mode === "d") {
        const block = Buffer.alloc(1 << 20, 7);
        let left = size;
        const pump = () => {
          while (left > 0) {
            const piece = left >= block.length ? block : block.subarray(0, left);
            left -= piece.length;
            if (!socket.write(piece)) return socket.once("drain", pump);
          }
          socket.end();
        };
        return pump();
      }
    }
    got += chunk.length;
    if (got >= size) socket.end("k");
  });
  socket.on("error", () => {});
});
server.listen(0, process.argv[1], () => console.log(server.address().port));
`;

/** Runs the bulk server in the server namespace; resolves with its port and a stop function. */
async function startBulkServer(): Promise<{ port: number; stop: () => void }> {
  const { serverNs, server } = rig();
  const child = spawn("ip", ["netns", "exec", serverNs, process.execPath, "-e", BULK_SERVER, server], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once("data", (data: Buffer) => resolve(Number(data.toString().trim())));
    child.once("exit", (code) => reject(new Error(`bulk server exited with ${code}`)));
  });
  return { port, stop: () => child.kill("SIGKILL") };
}

/** Moves `bytes` over one TCP connection in a direction; returns the rate in bits per second. */
export async function bulkRate(direction: "up" | "down", bytes: number): Promise<number> {
  const bulk = await startBulkServer();
  try {
    const socket = connect({ host: rig().server, port: bulk.port });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    const header = Buffer.alloc(9);
    header[0] = (direction === "up" ? "u" : "d").charCodeAt(0);
    header.writeBigUInt64BE(BigInt(bytes), 1);
    const started = process.hrtime.bigint();
    const done = new Promise<void>((resolve, reject) => {
      let got = 0;
      socket.on("data", (chunk: Buffer) => {
        got += chunk.length;
        if (direction === "up" || got >= bytes) resolve();
      });
      socket.once("error", reject);
      socket.once("close", () => (got >= (direction === "up" ? 1 : bytes) ? resolve() : reject(new Error("short"))));
    });
    socket.write(header);
    if (direction === "up") {
      const block = Buffer.alloc(1 << 20, 7);
      for (let left = bytes; left > 0; left -= block.length) {
        const piece = left >= block.length ? block : block.subarray(0, left);
        if (!socket.write(piece)) await new Promise((drained) => socket.once("drain", drained));
      }
    }
    await done;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    socket.destroy();
    return (bytes * 8) / seconds;
  } finally {
    bulk.stop();
  }
}
