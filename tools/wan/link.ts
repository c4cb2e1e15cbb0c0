/**
 * The WAN rig from inside (tools/wan/rig.sh runs its command in the client namespace): the delay line's control
 * socket (switch profiles, read the packet counts) and where the server side is.
 */
import { connect } from "node:net";

/** The rig's named paths (tools/wan/link/main.go holds their shapes). */
export const PROFILES = ["lan", "wan", "far", "lossy"] as const;
export type Profile = (typeof PROFILES)[number];

/** One direction of the path, as the delay line applies it. */
export interface Shape {
  profile: string;
  /** One-way delay. */
  delayMs: number;
  /** Rate cap in bits per second; 0 is none. */
  rateBits: number;
  /** Share of packets dropped, 0 to 1, per direction. */
  loss: number;
}

export interface Counters {
  in: number;
  out: number;
  dropLoss: number;
  dropQueue: number;
  bytesOut: number;
}

export interface LinkState {
  shape: Shape;
  /** Client to server. */
  ab: Counters;
  /** Server to client. */
  ba: Counters;
}

/** Where the rig is: set by tools/wan/rig.sh; throws, naming the script, when run outside it. */
export function rig(): { control: string; serverNs: string; server: string; client: string } {
  const { OUTPOST_WAN_CONTROL, OUTPOST_WAN_SERVER_NS, OUTPOST_WAN_SERVER, OUTPOST_WAN_CLIENT } = process.env;
  if (!OUTPOST_WAN_CONTROL || !OUTPOST_WAN_SERVER_NS || !OUTPOST_WAN_SERVER || !OUTPOST_WAN_CLIENT) {
    throw new Error("not inside the WAN rig: run this through tools/wan/rig.sh (make test-wan)");
  }
  return {
    control: OUTPOST_WAN_CONTROL,
    serverNs: OUTPOST_WAN_SERVER_NS,
    server: OUTPOST_WAN_SERVER,
    client: OUTPOST_WAN_CLIENT,
  };
}

/** Sends one command to the delay line and returns its JSON answer. */
async function control(command: string): Promise<LinkState> {
  const socket = connect(rig().control);
  return new Promise((resolve, reject) => {
    let reply = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      reply += chunk;
      const end = reply.indexOf("\n");
      if (end < 0) return;
      socket.end();
      const answer = JSON.parse(reply.slice(0, end)) as LinkState | { error: string };
      if ("error" in answer) reject(new Error(`delay line: ${command}: ${answer.error}`));
      else resolve(answer);
    });
    socket.on("error", reject);
    socket.write(`${command}\n`);
  });
}

/** Switches the path to a named profile; returns the new state. */
export function setProfile(profile: Profile): Promise<LinkState> {
  return control(`profile ${profile}`);
}

/** The current shape and packet counts. */
export function linkState(): Promise<LinkState> {
  return control("show");
}
