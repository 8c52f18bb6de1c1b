// The engine's wire contract as this extension uses it: method names, command ids, shapes.
// Pure: no `vscode` import, so the unit tests run under plain node.

export const RECORD_TYPES = ["user", "feedback", "project", "reference"] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

export const RECORD_SCHEME = "lazy-memory";

export const Methods = {
  recall: "lazy/memory/recall",
  save: "lazy/memory/save",
  remove: "lazy/memory/rm",
  compact: "lazy/memory/compact",
  document: "lazy/memory/document",
  doctor: "lazy/doctor",
  search: "lazy/search",
  changed: "lazy/memory/changed",
} as const;

// The engine's workspace/executeCommand ids. The language client registers a VS Code command
// for each id the server announces, so the extension's own commands use other ids
// (lazyMemory.*) to avoid registering the same command twice.
export const EngineCommands = {
  save: "lazy-memory.save",
  remove: "lazy-memory.rm",
  compact: "lazy-memory.compact",
  doctor: "lazy-memory.doctor",
} as const;

// An engine older than the editor features answers workspace/executeCommand with "method
// not found"; each command then has a custom request that does the same thing.
export const COMMAND_FALLBACKS: Record<string, string> = {
  [EngineCommands.save]: Methods.save,
  [EngineCommands.remove]: Methods.remove,
  [EngineCommands.compact]: Methods.compact,
  [EngineCommands.doctor]: Methods.doctor,
};

export interface RecordSummary {
  name: string;
  type: string;
  description: string;
  revision: number;
}

export interface Actor {
  kind: string;
  detail?: string | null;
}

export interface FullRecord extends RecordSummary {
  body: string;
  updated_at?: string;
  updated_by?: Actor;
}

// `records` is null when the store cannot be read: `unavailable` is then the engine's
// `MEMORY INDEX UNAVAILABLE (<why>)` marker, and `error` the why.
export interface RecallAllResult {
  records: RecordSummary[] | null;
  unavailable?: string;
  error?: string;
}

export interface RecallOneResult {
  record: FullRecord;
}

export interface DocumentResult {
  uri: string;
  name: string;
  text: string;
}

export interface SearchHit {
  name: string;
  type: string;
  description: string;
  snippet?: string;
  score?: number;
}

export interface SearchResult {
  hits: SearchHit[];
}

export interface RecordChange {
  name: string;
  revision?: number;
  operation?: string;
}

export interface SaveArguments {
  name: string;
  type: string;
  description: string;
  body: string;
  if_revision?: number;
}

export interface CompactOutcome {
  record_count: number;
  bytes_without: number;
  bytes_with: number;
  fallback_reason?: string | null;
  omitted?: string[];
}

export interface CompactResult {
  outcome?: CompactOutcome | null;
  status?: unknown;
  cleared?: boolean | null;
}

export interface Diagnosis {
  advice: string;
  remedy?: string;
  bytes?: number;
  warn_bytes?: number;
  record_count?: number;
}
