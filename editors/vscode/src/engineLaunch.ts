// How the engine is started, from the extension's settings: program, arguments, environment
// and working folder. Pure, so the tests can start the real engine exactly this way.

import * as os from "os";
import * as path from "path";

export const DEFAULT_ENGINE_COMMAND: readonly string[] = ["lazy", "engine"];
/** The engine's LAZY_EDITOR: an editor's engine writes as the human at the keyboard. */
export const EDITOR_NAME = "vscode";

export interface EngineSettings {
  engineCommand?: unknown;
  dataDirectory?: unknown;
}

export interface EngineLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Settings that were ignored, and why: shown to the user, never fatal. */
  warnings: string[];
}

/**
 * The launch for settings. A malformed engine command falls back to the default and says so;
 * dataDirectory becomes LAZY_DATA (relative to the workspace folder, ~ for home); LAZY_EDITOR
 * tells the engine it serves the person at this editor, so saves are `human:<user>` as from the
 * CLI; the rest of the environment is handed on as it is.
 */
export function engineLaunch(
  settings: EngineSettings,
  baseEnv: Readonly<Record<string, string | undefined>>,
  workspaceFolder?: string,
  home: string = os.homedir(),
): EngineLaunch {
  const warnings: string[] = [];
  let command = [...DEFAULT_ENGINE_COMMAND];
  const configured = settings.engineCommand;
  if (isCommand(configured)) {
    command = [...configured];
  } else if (configured !== undefined && configured !== null) {
    warnings.push(
      "lazyMemory.engineCommand must be a list of strings whose first item is the program; " +
        `using ${JSON.stringify(DEFAULT_ENGINE_COMMAND)}`,
    );
  }
  const cwd = workspaceFolder ?? home;
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(baseEnv)) {
    if (value !== undefined) {
      env[key] = value;
    }
  }
  const dataDirectory = stringSetting(settings.dataDirectory, "lazyMemory.dataDirectory", warnings);
  if (dataDirectory) {
    env.LAZY_DATA = path.resolve(cwd, expandHome(dataDirectory, home));
  }
  env.LAZY_EDITOR = EDITOR_NAME;
  return { command: command[0], args: command.slice(1), env, cwd, warnings };
}

function isCommand(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => typeof item === "string") &&
    value[0].trim() !== ""
  );
}

function stringSetting(value: unknown, name: string, warnings: string[]): string | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  if (typeof value !== "string") {
    warnings.push(`${name} must be a string; ignored`);
    return undefined;
  }
  return value.trim() || undefined;
}

function expandHome(directory: string, home: string): string {
  if (directory === "~") {
    return home;
  }
  if (directory.startsWith("~/")) {
    return path.join(home, directory.slice(2));
  }
  return directory;
}
