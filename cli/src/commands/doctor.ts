/**
 * `doctor`: the agent's own `outpost doctor --json` run on the target (through exec of the agent binary the SDK
 * verified), plus what the connection learnt: host key, platform, agent version, round-trip time.
 */
import { type SshTargetOptions, scanHostKey } from "@outpost/sdk";
import { CliFailure, EXIT, failed } from "../exit.js";
import type { Session } from "../target.js";

/** One check of the agent's doctor report. */
interface Check {
  name: string;
  verdict: string;
  detail: string;
  hint?: string;
}

interface Report {
  ok: boolean;
  checks: Check[];
}

function isReport(value: unknown): value is Report {
  if (typeof value !== "object" || value === null) return false;
  const report = value as Record<string, unknown>;
  return typeof report.ok === "boolean" && Array.isArray(report.checks);
}

/** The median of `rounds` round trips of a small request (a `fileInfo` of the working directory). */
async function roundTripMs(session: Session, rounds = 5): Promise<number> {
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const start = performance.now();
    const info = await session.env.fileInfo(session.env.cwd, { abortSignal: undefined });
    if (!info.ok) throw failed("doctor: round trip", info.error);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

async function agentReport(session: Session): Promise<Report> {
  let out = "";
  let errText = "";
  const ran = await session.env.exec(
    [session.agentPath(), "doctor", "--json"],
    {
      onOutput: (text, _context, info) => {
        if (info.stream === "stdout") out += text;
        else errText += text;
      },
    },
    { abortSignal: undefined },
  );
  if (!ran.ok) throw failed("doctor: running the agent's doctor", ran.error);
  let parsed: unknown;
  try {
    parsed = JSON.parse(out);
  } catch {
    throw new CliFailure(
      `doctor: the agent printed no doctor report (exit ${ran.value.exitCode}); an agent older than \`outpost doctor\`? ${errText.trim()}`,
      "not_supported",
    );
  }
  if (!isReport(parsed)) throw new CliFailure("doctor: the agent's report has an unexpected shape", "unknown");
  return parsed;
}

/** Prints the connection facts and the agent's checks; returns 0 only when every check passed. */
export async function doctor(session: Session, ssh: SshTargetOptions | undefined, json: boolean): Promise<number> {
  const info = await session.connection.info();
  const rtt = await roundTripMs(session);
  let hostKey: string | undefined;
  if (ssh !== undefined) {
    const scanned = await scanHostKey(session.target, ssh);
    hostKey = scanned.ok
      ? `${scanned.value.keyType} ${scanned.value.fingerprint}`
      : `unknown (${scanned.error.message})`;
  }
  const report = await agentReport(session);
  const facts = {
    target: session.target,
    platform: session.platform,
    agent: `${info.version} (protocol ${info.protocol}) at ${session.agentPath()}`,
    ...(hostKey === undefined ? {} : { hostKey }),
    roundTripMs: Number(rtt.toFixed(2)),
  };
  if (json) {
    process.stdout.write(`${JSON.stringify({ ...facts, ok: report.ok, checks: report.checks })}\n`);
  } else {
    const lines = [
      `target      ${facts.target}`,
      `platform    ${facts.platform}`,
      `agent       ${facts.agent}`,
      ...(hostKey === undefined ? [] : [`host key    ${hostKey}`]),
      `round trip  ${facts.roundTripMs} ms`,
      "",
      ...report.checks.map(
        (check) =>
          `${check.verdict.padEnd(5)} ${check.name.padEnd(18)} ${check.detail}${check.hint ? ` — ${check.hint}` : ""}`,
      ),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  }
  return report.ok ? EXIT.ok : EXIT.failure;
}
