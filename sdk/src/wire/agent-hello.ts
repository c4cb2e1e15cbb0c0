/** The `hello` exchange that opens every session: the protocol version asked for and the machine's answer. */
import { isWireObject } from "./wire.js";

/** The protocol version the client speaks. */
export const PROTOCOL = 1;

/** What the agent reports about its machine in answer to `hello`. */
export interface RemoteInfo {
  protocol: number;
  version: string;
  /** `linux`, `macos`, `android` or `windows`. */
  os: string;
  /** `x86_64` or `aarch64`. */
  arch: string;
  home: string;
  separator: string;
  tmpdir: string;
  cwd: string;
  driveCwds: Record<string, string>;
  pid: number;
  /** Operations beyond protocol 1 that this agent implements. */
  features: string[];
}

function stringField(json: Record<string, unknown>, key: string, fallback = ""): string {
  const value = json[key];
  return typeof value === "string" ? value : fallback;
}

/** Reads the agent's `hello` answer; missing or mistyped fields become empty values. */
export function toRemoteInfo(json: Record<string, unknown>): RemoteInfo {
  const os = stringField(json, "os");
  const driveCwds: Record<string, string> = {};
  if (isWireObject(json.driveCwds)) {
    for (const [drive, dir] of Object.entries(json.driveCwds)) if (typeof dir === "string") driveCwds[drive] = dir;
  }
  return {
    protocol: PROTOCOL,
    version: stringField(json, "version"),
    os,
    arch: stringField(json, "arch"),
    home: stringField(json, "home"),
    separator: stringField(json, "separator", os === "windows" ? "\\" : "/"),
    tmpdir: stringField(json, "tmpdir"),
    cwd: stringField(json, "cwd"),
    driveCwds,
    pid: typeof json.pid === "number" ? json.pid : 0,
    features: Array.isArray(json.features)
      ? json.features.filter((feature): feature is string => typeof feature === "string")
      : [],
  };
}
