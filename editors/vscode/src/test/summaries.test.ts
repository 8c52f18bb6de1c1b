import assert from "node:assert/strict";
import { test } from "node:test";

import { describeCompact, describeDiagnosis } from "../summaries";

test("describeCompact gives the sizes, the fallback and the names added back", () => {
  const text = describeCompact({
    outcome: {
      record_count: 12,
      bytes_without: 5000,
      bytes_with: 1800,
      fallback_reason: "LAZY_OFFLINE is set",
      omitted: ["a", "b"],
    },
  });
  assert.equal(
    text,
    "Compacted 12 records: the memory section is 1800 bytes (5000 without the compact). " +
      "Used the mechanical summary: LAZY_OFFLINE is set. Added back verbatim: a, b.",
  );
});

test("describeDiagnosis gives the advice and the measured size", () => {
  assert.equal(
    describeDiagnosis({ advice: "Nothing to do. ", bytes: 300, warn_bytes: 4096 }),
    "Nothing to do. (memory section 300 of 4096 advisory bytes)",
  );
  assert.equal(describeDiagnosis({ advice: "Run compact." }), "Run compact.");
});
