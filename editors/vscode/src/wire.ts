// Requests that take more than one step on the wire, written against a bare `send` so the
// extension (through its language client) and the tests (through vscode-jsonrpc) share them.

import { isMethodNotFound } from "./errors";
import {
  COMMAND_FALLBACKS,
  DocumentResult,
  Methods,
  RecallAllResult,
  RecallOneResult,
  RecordSummary,
} from "./protocol";
import { recordUri, renderRecord } from "./records";

/** Sends one JSON-RPC request and resolves with its result. */
export type Send = <R>(method: string, params: object) => Promise<R>;

export const EXECUTE_COMMAND = "workspace/executeCommand";

/**
 * One of the engine's workspace/executeCommand commands (under its write gate); an engine
 * without the editor commands gets the custom request that does the same.
 */
export async function executeEngineCommand<R>(
  send: Send,
  command: string,
  argument?: object,
): Promise<R> {
  try {
    return await send<R>(EXECUTE_COMMAND, {
      command,
      arguments: argument === undefined ? [] : [argument],
    });
  } catch (error) {
    const fallback = COMMAND_FALLBACKS[command];
    if (fallback && isMethodNotFound(error)) {
      return send<R>(fallback, argument ?? {});
    }
    throw error;
  }
}

/**
 * A record as the markdown of its `lazy-memory:NAME` document: the engine's own rendering,
 * or, from an engine without lazy/memory/document, the record rendered here.
 */
export async function recordText(send: Send, name: string): Promise<string> {
  try {
    const document = await send<DocumentResult>(Methods.document, { uri: recordUri(name) });
    return document.text;
  } catch (error) {
    if (!isMethodNotFound(error)) {
      throw error;
    }
    const result = await send<RecallOneResult>(Methods.recall, { name });
    return renderRecord(result.record);
  }
}

/** The index as the views show it: the live records, or the marker of an unreadable store. */
export type RecordIndex =
  | { records: RecordSummary[]; unavailable?: undefined }
  | { records?: undefined; unavailable: string };

/** What the view says when the engine's answer holds neither records nor its marker. */
export const NO_INDEX_MARKER = "MEMORY INDEX UNAVAILABLE (the engine's answer holds no index)";

/**
 * The engine's index (`lazy/memory/recall` without a name). A store that cannot be read is
 * its marker, never an empty list: an empty store and an unreadable one never look alike.
 */
export async function recordIndex(send: Send): Promise<RecordIndex> {
  const result = await send<RecallAllResult>(Methods.recall, {});
  if (Array.isArray(result?.records)) {
    return { records: result.records };
  }
  const marker = result?.unavailable;
  const given = typeof marker === "string" && marker.trim() !== "";
  return { unavailable: given ? marker : NO_INDEX_MARKER };
}
