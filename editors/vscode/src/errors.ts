// Turning what the engine (or the client library) threw into one line for the user. Pure.

export const ERROR_TYPES: Readonly<Record<number, string>> = {
  [-32010]: "NotFound",
  [-32011]: "InvalidRecord",
  [-32012]: "Conflict",
  [-32013]: "PermissionDenied",
  [-32014]: "StorageUnavailable",
  [-32015]: "CompactRejected",
  [-32016]: "LLMUnavailable",
  [-32017]: "InvalidConfig",
  [-32018]: "InvalidQuery",
};

export const METHOD_NOT_FOUND = -32601;

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}

/** The JSON-RPC error code of error, if it has one. */
export function errorCode(error: unknown): number | undefined {
  const code = (error as ErrorLike | null)?.code;
  return typeof code === "number" ? code : undefined;
}

/** True when the engine does not know the method (an engine older than this extension). */
export function isMethodNotFound(error: unknown): boolean {
  return errorCode(error) === METHOD_NOT_FOUND;
}

/** The error's type name: `data.type` from the engine, else the one its code stands for. */
export function errorType(error: unknown): string | undefined {
  const data = (error as ErrorLike | null)?.data;
  const type = (data as { type?: unknown } | null | undefined)?.type;
  if (typeof type === "string" && type !== "") {
    return type;
  }
  const code = errorCode(error);
  return code === undefined ? undefined : ERROR_TYPES[code];
}

/** One line for the user: the engine's own message, and its error type when there is one. */
export function describeError(error: unknown): string {
  const raw = (error as ErrorLike | null)?.message;
  const message =
    typeof raw === "string" && raw.trim() !== "" ? raw.trim() : String(error ?? "unknown error");
  const type = errorType(error);
  return type && !message.includes(type) ? `${message} (${type})` : message;
}
