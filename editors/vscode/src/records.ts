// Pure helpers over records: grouping for the tree, validation before a save, the URI of a
// record's document, and the markdown shown when the engine has no document method.

import { FullRecord, RECORD_SCHEME, RECORD_TYPES, RecordSummary } from "./protocol";

export const NAME_MAX_LENGTH = 200;
export const DESCRIPTION_MAX_LENGTH = 200;
// The engine's name rule (engine/names.py), checked here only to ask again before a save.
// Unprintable: every C (control, format, surrogate...) and Z (separator) but the plain space.
const NAME_UNPRINTABLE = /[\p{C}\p{Z}]/u;
const NAME_TYPE_MARK = /\(\s*(user|feedback|project|reference)\s*\)\s*:/iu;
const LINE_BREAK = /[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]/;

export interface RecordGroup {
  type: string;
  records: RecordSummary[];
}

/** The records by type: the four types in their usual order, then any other, by name. */
export function groupByType(records: readonly RecordSummary[]): RecordGroup[] {
  const byType = new Map<string, RecordSummary[]>();
  for (const record of records) {
    const group = byType.get(record.type) ?? [];
    group.push(record);
    byType.set(record.type, group);
  }
  const known: readonly string[] = RECORD_TYPES;
  const others = [...byType.keys()].filter((type) => !known.includes(type)).sort();
  return [...known, ...others]
    .filter((type) => byType.has(type))
    .map((type) => ({
      type,
      records: (byType.get(type) ?? []).sort((a, b) => compareText(a.name, b.name)),
    }));
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Why name cannot be saved as a new record, or undefined when it can. */
export function nameProblem(name: string): string | undefined {
  const length = [...name].length; // code points, as the engine counts them
  if (
    length < 1 ||
    length > NAME_MAX_LENGTH ||
    NAME_UNPRINTABLE.test(name.replaceAll(" ", "")) ||
    name.trim() !== name ||
    /[/\\]/.test(name) ||
    name.startsWith(".") ||
    NAME_TYPE_MARK.test(name)
  ) {
    return (
      `use 1-${NAME_MAX_LENGTH} printable characters (spaces, capitals and any script are ` +
      "fine) without control characters, '/' or '\\', a leading dot, spaces at either end " +
      "or '(type):'"
    );
  }
  return undefined;
}

/** Why description cannot be saved, or undefined when it can. */
export function descriptionProblem(description: string): string | undefined {
  if (description.trim() === "") {
    return `give a one-line summary of at most ${DESCRIPTION_MAX_LENGTH} characters`;
  }
  if (LINE_BREAK.test(description)) {
    return "the description must be one line: put the detail in the body";
  }
  const length = [...description].length;
  if (length > DESCRIPTION_MAX_LENGTH) {
    return `the description is ${length} characters; the limit is ${DESCRIPTION_MAX_LENGTH}`;
  }
  return undefined;
}

/** The engine's URI for a record's read-only document: `lazy-memory:NAME`. */
export function recordUri(name: string): string {
  return `${RECORD_SCHEME}:${name}`;
}

/** The record a `lazy-memory:` URI's path names. */
export function nameOfPath(path: string): string {
  return path.startsWith("/") ? path.slice(1) : path;
}

/** A record as markdown, for engines that do not answer lazy/memory/document. */
export function renderRecord(record: FullRecord): string {
  const writer = record.updated_by
    ? [record.updated_by.kind, record.updated_by.detail].filter(Boolean).join(":")
    : undefined;
  const facts = [
    `type: ${record.type}`,
    `revision: ${record.revision}`,
    ...(writer ? [`last written by: ${writer}`] : []),
    ...(record.updated_at ? [`at: ${record.updated_at}`] : []),
  ];
  return [
    `# ${record.name}`,
    "",
    `_${record.description}_`,
    "",
    facts.map((fact) => `- ${fact}`).join("\n"),
    "",
    record.body,
  ].join("\n");
}
