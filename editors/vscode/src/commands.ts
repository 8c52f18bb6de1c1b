// The command palette's "Lazy Memory: ..." commands and the view's menu entries.

import * as vscode from "vscode";

import { Engine } from "./client";
import { recordDocumentUri } from "./documents";
import { describeError } from "./errors";
import {
  CompactResult,
  Diagnosis,
  EngineCommands,
  Methods,
  RECORD_TYPES,
  SearchResult,
} from "./protocol";
import { descriptionProblem, nameProblem } from "./records";
import { describeCompact, describeDiagnosis } from "./summaries";
import { Node, RecordTree } from "./tree";

/** A record named by the tree's context menu (a node), a link (a string), or nobody. */
type RecordArgument = Node | string | undefined;

export function registerCommands(engine: Engine, tree: RecordTree): vscode.Disposable[] {
  const command = (id: string, run: (...args: never[]) => Promise<void>): vscode.Disposable =>
    vscode.commands.registerCommand(id, async (...args: never[]) => {
      try {
        await run(...args);
      } catch (error) {
        void vscode.window.showErrorMessage(`Lazy Memory: ${describeError(error)}`);
      }
    });

  return [
    command("lazyMemory.saveRecord", () => saveRecord(engine)),
    command("lazyMemory.removeRecord", (argument: RecordArgument) =>
      removeRecord(engine, argument),
    ),
    command("lazyMemory.compact", () => compact(engine)),
    command("lazyMemory.doctor", () => doctor(engine)),
    command("lazyMemory.showRecord", async (argument: RecordArgument) => {
      const name = recordName(argument) ?? (await pickRecord(engine, "Show which record?"));
      if (name) {
        await showRecord(name);
      }
    }),
    command("lazyMemory.search", () => search(engine)),
    command("lazyMemory.refresh", async () => {
      engine.retryIfFailed();
      tree.refresh();
    }),
  ];
}

function recordName(argument: RecordArgument): string | undefined {
  if (typeof argument === "string") {
    return argument;
  }
  return argument?.kind === "record" ? argument.record.name : undefined;
}

async function showRecord(name: string): Promise<void> {
  const document = await vscode.workspace.openTextDocument(recordDocumentUri(name));
  await vscode.languages.setTextDocumentLanguage(document, "markdown");
  await vscode.window.showTextDocument(document, { preview: true });
}

async function pickRecord(engine: Engine, placeHolder: string): Promise<string | undefined> {
  const { records, unavailable } = await engine.recordIndex();
  if (unavailable !== undefined) {
    throw new Error(unavailable.split("\n")[0]);
  }
  if (records.length === 0) {
    void vscode.window.showInformationMessage("Lazy Memory: the store has no records.");
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    records.map((record) => ({
      label: record.name,
      description: record.type,
      detail: record.description,
    })),
    { placeHolder, matchOnDescription: true, matchOnDetail: true },
  );
  return picked?.label;
}

async function saveRecord(engine: Engine): Promise<void> {
  const name = await vscode.window.showInputBox({
    title: "Save Record (1/4)",
    prompt: "The record's name (an existing name makes a new revision of that record)",
    placeHolder: "deploy-steps",
    validateInput: (value) => nameProblem(value.trim()),
  });
  if (name === undefined) {
    return;
  }
  const type = await vscode.window.showQuickPick([...RECORD_TYPES], {
    title: "Save Record (2/4)",
    placeHolder: "The record's type",
  });
  if (type === undefined) {
    return;
  }
  const description = await vscode.window.showInputBox({
    title: "Save Record (3/4)",
    prompt: "One line saying what the record is for (at most 200 characters)",
    validateInput: (value) => descriptionProblem(value),
  });
  if (description === undefined) {
    return;
  }
  const selection = vscode.window.activeTextEditor?.selection;
  const selected =
    selection && !selection.isEmpty
      ? vscode.window.activeTextEditor?.document.getText(selection)
      : undefined;
  const body = await vscode.window.showInputBox({
    title: "Save Record (4/4)",
    prompt: "The record's body (markdown); the editor's selection when there is one",
    value: selected,
  });
  if (body === undefined) {
    return;
  }
  await engine.executeCommand(EngineCommands.save, {
    name: name.trim(),
    type,
    description,
    body,
  });
  void vscode.window.showInformationMessage(`Lazy Memory: saved ${name.trim()}.`);
}

async function removeRecord(engine: Engine, argument: RecordArgument): Promise<void> {
  const name = recordName(argument) ?? (await pickRecord(engine, "Remove which record?"));
  if (!name) {
    return;
  }
  const answer = await vscode.window.showWarningMessage(
    `Remove the memory record "${name}"? Its history is kept; saving the name again revives it.`,
    { modal: true },
    "Remove",
  );
  if (answer !== "Remove") {
    return;
  }
  await engine.executeCommand(EngineCommands.remove, { name });
  void vscode.window.showInformationMessage(`Lazy Memory: removed ${name}.`);
}

async function compact(engine: Engine): Promise<void> {
  const modes = [
    { label: "auto", detail: "ask the model, fall back to the mechanical summary on any failure" },
    { label: "mechanical", detail: "group the index by type, every name and description kept" },
    { label: "llm", detail: "ask the model, and fail if it cannot be used" },
  ];
  const mode = await vscode.window.showQuickPick(modes, { placeHolder: "How to compact" });
  if (!mode) {
    return;
  }
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Lazy Memory: compacting..." },
    () => engine.executeCommand<CompactResult>(EngineCommands.compact, { mode: mode.label }),
  );
  void vscode.window.showInformationMessage(`Lazy Memory: ${describeCompact(result)}`);
}

async function doctor(engine: Engine): Promise<void> {
  const diagnosis = await engine.executeCommand<Diagnosis>(EngineCommands.doctor);
  const details = "Show Details";
  const answer = await vscode.window.showInformationMessage(
    `Lazy Memory doctor: ${describeDiagnosis(diagnosis)}`,
    details,
  );
  if (answer === details) {
    const document = await vscode.workspace.openTextDocument({
      language: "json",
      content: JSON.stringify(diagnosis, null, 2),
    });
    await vscode.window.showTextDocument(document, { preview: true });
  }
}

async function search(engine: Engine): Promise<void> {
  const pick = vscode.window.createQuickPick<vscode.QuickPickItem>();
  pick.placeholder = "Search the records (e.g. deploy, type:project, in:memories staging)";
  pick.matchOnDescription = true;
  let latest = 0;
  let timer: NodeJS.Timeout | undefined;
  const run = async (query: string, ticket: number): Promise<void> => {
    if (query.trim() === "") {
      pick.items = [];
      pick.busy = false;
      return;
    }
    try {
      const { hits } = await engine.request<SearchResult>(Methods.search, { query, limit: 50 });
      if (ticket !== latest) {
        return;
      }
      // alwaysShow: the engine ranked these for the query; the quick pick must not filter
      // them again by its own fuzzy match of the typed text against the names.
      pick.items = hits.map((hit) => ({
        label: hit.name,
        description: `${hit.type} · ${hit.description}`,
        detail: hit.snippet,
        alwaysShow: true,
      }));
      pick.title = hits.length === 0 ? "No records match" : undefined;
    } catch (error) {
      if (ticket === latest) {
        pick.items = [];
        pick.title = describeError(error);
      }
    } finally {
      if (ticket === latest) {
        pick.busy = false;
      }
    }
  };
  pick.onDidChangeValue((query) => {
    const ticket = ++latest;
    pick.busy = true;
    if (timer) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => void run(query, ticket), 200);
  });
  pick.onDidAccept(() => {
    const chosen = pick.selectedItems[0];
    pick.hide();
    if (chosen) {
      showRecord(chosen.label).catch((error) =>
        vscode.window.showErrorMessage(`Lazy Memory: ${describeError(error)}`),
      );
    }
  });
  pick.onDidHide(() => {
    if (timer) {
      clearTimeout(timer);
    }
    pick.dispose();
  });
  pick.show();
}
