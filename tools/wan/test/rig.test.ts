/**
 * The rig is faithful: per profile, the round trip `ping` sees is never below the profile's (the line never
 * delivers early), a plain TCP stream never beats the rate cap, and on `lossy` the share of lost pings and the
 * line's own drop count match the profile's loss. The measured figures are printed: how close to the profile they
 * come on a loaded machine is reported, not asserted.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { linkState, PROFILES, type Profile, setProfile } from "../link.js";
import { bulkRate, ping } from "../probe.js";
import { type RigServer, startRigServer } from "../server.js";

const run = promisify(execFile);
const MiB = 1 << 20;

/** Bytes to stream per profile: a few seconds at the cap, past TCP's slow start. */
const bulkBytes: Record<Profile, number> = { lan: 64 * MiB, wan: 32 * MiB, far: 8 * MiB, lossy: 16 * MiB };

const report: string[] = [];
afterAll(() => {
  console.log(["profile  shape                      measured", ...report].join("\n"));
});

describe.each(PROFILES)("the %s profile", (profile) => {
  it("delays every packet by at least its round trip and caps the rate", async () => {
    const { shape } = await setProfile(profile);
    const rtt = 2 * shape.delayMs;
    const pinged = await ping(20, 0.05);
    expect(pinged.received).toBeGreaterThan(0);
    // ping's clock and the line's both count from the kernel's timestamps; a hair below 2×delay is a rounding.
    expect(pinged.minMs).toBeGreaterThanOrEqual(rtt - 0.05);
    const up = await bulkRate("up", bulkBytes[profile]);
    const down = await bulkRate("down", bulkBytes[profile]);
    // Goodput carries no headers; the line counts every byte of every packet against the cap.
    expect(up).toBeLessThanOrEqual(shape.rateBits);
    expect(down).toBeLessThanOrEqual(shape.rateBits);
    const mbit = (bits: number) => (bits / 1e6).toFixed(1);
    report.push(
      `${profile.padEnd(8)} ${`${rtt} ms RTT, ${mbit(shape.rateBits)} Mbit/s, ${shape.loss * 100}% loss`.padEnd(26)} ` +
        `ping min/avg ${pinged.minMs.toFixed(2)}/${pinged.avgMs.toFixed(2)} ms, ` +
        `TCP up ${mbit(up)} Mbit/s (${((up / shape.rateBits) * 100).toFixed(0)}% of cap), ` +
        `down ${mbit(down)} Mbit/s (${((down / shape.rateBits) * 100).toFixed(0)}%)`,
    );
  });
});

describe("loss on the lossy profile", () => {
  it("drops its share of packets in each direction", async () => {
    const { shape } = await setProfile("lossy");
    const before = await linkState();
    const pinged = await ping(500, 0.01);
    const after = await linkState();
    // A ping is lost if its request or its reply is: 1 − (1 − p)², 3.96% at p = 2%. Five standard deviations of
    // the binomial either side: a faithful line fails this about once in two million runs.
    const expected = 1 - (1 - shape.loss) ** 2;
    const lost = pinged.sent - pinged.received;
    const sigma = Math.sqrt(pinged.sent * expected * (1 - expected));
    expect(lost).toBeGreaterThanOrEqual(Math.max(1, pinged.sent * expected - 5 * sigma));
    expect(lost).toBeLessThanOrEqual(pinged.sent * expected + 5 * sigma);
    const seen = after.ab.in - before.ab.in + (after.ba.in - before.ba.in);
    const dropped = after.ab.dropLoss - before.ab.dropLoss + (after.ba.dropLoss - before.ba.dropLoss);
    report.push(
      `lossy    ping: ${lost}/${pinged.sent} lost (${((lost / pinged.sent) * 100).toFixed(1)}%, expected ` +
        `${(expected * 100).toFixed(2)}%); line: ${dropped}/${seen} packets dropped (${((dropped / seen) * 100).toFixed(2)}%)`,
    );
  });
});

describe("sshd across the rig", () => {
  let server: RigServer;
  beforeAll(async () => {
    server = await startRigServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers `ssh host true` at every profile, no faster than its handshake's round trips allow", async () => {
    for (const profile of ["lan", "wan"] as const) {
      const { shape } = await setProfile(profile);
      const started = performance.now();
      await run("ssh", [...server.sshArgs, server.host, "true"]);
      const ms = performance.now() - started;
      // TCP's handshake, the key exchange, authentication and the channel: at least four round trips.
      expect(ms).toBeGreaterThanOrEqual(4 * 2 * shape.delayMs);
      report.push(`${profile.padEnd(8)} ssh host true: ${ms.toFixed(0)} ms`);
    }
  });
});
