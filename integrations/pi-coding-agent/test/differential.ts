/**
 * The differential runner shared by the local and the remote case: the scenario is built for pi's local tools and
 * for an Outpost side, every case runs on both in order, and the outcomes must be identical or exactly the accepted
 * difference. It logs the comparison counts (calls, identical, accepted differences).
 */
import "./pi-setup.js";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CASES } from "./cases.js";
import { type Outcome, runCase, type Side, type ToolCase } from "./harness.js";
import { piLocalDefinitions } from "./pi-local.js";
import { buildScenario } from "./scenario.js";

/** An Outpost side of a comparison and how to end it. */
export interface OutpostSide {
  side: Side;
  /** Roots that name the scenario in this side's outcomes (besides `side.root`). */
  extraRoots?: string[];
  close(): Promise<void>;
}

/** Options of {@link defineDifferential}. */
export interface DifferentialOptions {
  title: string;
  /** Builds the Outpost side in `base` (the scenario for pi's side is already in `base/pi`). */
  setup(base: string): Promise<OutpostSide>;
  /** Which cases run (default: all). */
  cases?: readonly ToolCase[];
  /** Checks after every case (e.g. that the local disk was not touched). */
  afterEachCase?(outcome: Outcome): Promise<void> | void;
  /** Checks after all cases. */
  afterAllCases?(): Promise<void> | void;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The full-output files pi's local bash tool writes. */
export const LOCAL_FULL_OUTPUT = new RegExp(`${escapeRegExp(tmpdir())}/pi-bash-[0-9a-f]{16}\\.log`, "g");

/** The full-output files the Outpost bash tool writes on the target (a temp file of the env). */
export const TARGET_FULL_OUTPUT = /\/\S*\/pi-bash-[0-9a-f-]+\.log/g;

/** Defines the comparison as one vitest test per case, in order. */
export function defineDifferential(options: DifferentialOptions): void {
  describe(options.title, () => {
    let base: string;
    let pi: Side;
    let outpost: OutpostSide;
    const counts = { calls: 0, identical: 0, accepted: 0 };

    beforeAll(async () => {
      base = mkdtempSync(join(tmpdir(), "outpost-pi-diff-"));
      const piRoot = join(base, "pi");
      mkdirSync(piRoot);
      buildScenario(piRoot);
      pi = {
        root: piRoot,
        definitions: piLocalDefinitions(piRoot),
        readFile: async (path) => (existsSync(path) ? readFileSync(path, "utf8") : null),
        fullOutputPattern: LOCAL_FULL_OUTPUT,
      };
      outpost = await options.setup(base);
    });

    afterAll(async () => {
      await options.afterAllCases?.();
      await outpost?.close();
      rmSync(base, { recursive: true, force: true });
      console.log(
        `${options.title}: ${counts.calls} calls, ${counts.identical} identical, ${counts.accepted} accepted differences`,
      );
    });

    for (const toolCase of options.cases ?? CASES) {
      it(`${toolCase.tool}: ${toolCase.label}`, async () => {
        const roots = [pi.root, outpost.side.root, ...(outpost.extraRoots ?? [])];
        const expected = await runCase(pi, toolCase, roots);
        const actual = await runCase(outpost.side, toolCase, roots);
        counts.calls++;
        if (process.env.PI_DIFF_DUMP) {
          appendFileSync(process.env.PI_DIFF_DUMP, `${JSON.stringify({ case: toolCase.label, expected, actual })}\n`);
        }
        await options.afterEachCase?.(actual);
        if (toolCase.accepted === undefined) {
          expect(actual).toEqual(expected);
          counts.identical++;
        } else {
          // The difference must still exist (else the README's list is stale) and be exactly the accepted one.
          expect(actual).not.toEqual(expected);
          expect(actual).toEqual(toolCase.accepted.expect(expected));
          counts.accepted++;
        }
      });
    }
  });
}
