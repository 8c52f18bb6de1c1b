// Short texts for notifications about what the engine did. Pure.

import { CompactResult, Diagnosis } from "./protocol";

/** One line about a compaction's result. */
export function describeCompact(result: CompactResult): string {
  const outcome = result.outcome;
  if (!outcome) {
    return "Compaction finished.";
  }
  let text =
    `Compacted ${outcome.record_count} records: the memory section is ` +
    `${outcome.bytes_with} bytes (${outcome.bytes_without} without the compact).`;
  if (outcome.fallback_reason) {
    text += ` Used the mechanical summary: ${outcome.fallback_reason}.`;
  }
  if (outcome.omitted && outcome.omitted.length > 0) {
    text += ` Added back verbatim: ${outcome.omitted.join(", ")}.`;
  }
  return text;
}

/** Doctor's advice, with the size it measured. */
export function describeDiagnosis(diagnosis: Diagnosis): string {
  const size =
    typeof diagnosis.bytes === "number" && typeof diagnosis.warn_bytes === "number"
      ? ` (memory section ${diagnosis.bytes} of ${diagnosis.warn_bytes} advisory bytes)`
      : "";
  return `${diagnosis.advice.trim()}${size}`;
}
