// `node --import tsx tools/nightly-summary.ts <report.jsonl>...`: merges the property reports of the shards of a
// nightly run (`OUTPOST_PROP_REPORT`), prints one line per property and exits 1 unless every shard of every
// property passed.
import { readFileSync } from "node:fs";
import { formatSummary, parseReports, summarize } from "../properties/summary.js";

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: nightly-summary <report.jsonl>...");
  process.exit(2);
}
const summary = summarize(files.flatMap((file) => parseReports(readFileSync(file, "utf8"), file)));
console.log(formatSummary(summary));
process.exit(summary.passed ? 0 : 1);
