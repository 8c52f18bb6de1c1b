// Requests that take more than one step on the wire, written against a bare `send` so the
// extension (through its language client) and the tests (through vscode-jsonrpc) share them.

import { isMethodNotFound } from "./errors";
import { COMMAND_FALLBACKS, DocumentResult, Methods, RecallOneResult } from "./protocol";
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
