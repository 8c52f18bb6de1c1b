import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";

import { engineLaunch } from "../engineLaunch";

const home = path.resolve("/home/someone");
const folder = path.resolve("/work/project");

test("defaults: lazy engine in the workspace folder, the environment plus LAZY_EDITOR", () => {
  const launch = engineLaunch({}, { PATH: "/bin", LAZY_STORAGE: "files" }, folder, home);
  assert.equal(launch.command, "lazy");
  assert.deepEqual(launch.args, ["engine"]);
  assert.equal(launch.cwd, folder);
  assert.deepEqual(launch.env, { PATH: "/bin", LAZY_STORAGE: "files", LAZY_EDITOR: "vscode" });
  assert.deepEqual(launch.warnings, []);
});

test("the engine command is used verbatim, spaces and all", () => {
  const launch = engineLaunch(
    { engineCommand: ["/opt/my tools/lazy", "engine", "--flag=a b"] },
    {},
    folder,
    home,
  );
  assert.equal(launch.command, "/opt/my tools/lazy");
  assert.deepEqual(launch.args, ["engine", "--flag=a b"]);
});

test("a malformed engine command falls back to the default and says why", () => {
  for (const engineCommand of ["lazy engine", [], [""], [1, 2], {}]) {
    const launch = engineLaunch({ engineCommand }, {}, folder, home);
    assert.equal(launch.command, "lazy", JSON.stringify(engineCommand));
    assert.match(launch.warnings.join(), /lazyMemory.engineCommand/);
  }
});

test("dataDirectory becomes LAZY_DATA: absolute, relative to the folder, or under ~", () => {
  const data = (dataDirectory: string) =>
    engineLaunch({ dataDirectory }, {}, folder, home).env.LAZY_DATA;
  assert.equal(data(path.resolve("/srv/memory")), path.resolve("/srv/memory"));
  assert.equal(data("store"), path.join(folder, "store"));
  assert.equal(data("~/memory"), path.join(home, "memory"));
  assert.equal(data("~"), home);
  const noFolder = engineLaunch({ dataDirectory: "store" }, {}, undefined, home);
  assert.equal(noFolder.cwd, home);
  assert.equal(noFolder.env.LAZY_DATA, path.join(home, "store"));
  assert.equal(data(""), undefined);
  assert.equal(data("   "), undefined);
});

test("a set setting overrides the inherited variable; an empty one leaves it", () => {
  const inherited = { LAZY_DATA: "/inherited" };
  const kept = engineLaunch({ dataDirectory: "" }, inherited, folder, home);
  assert.equal(kept.env.LAZY_DATA, "/inherited");
  const replaced = engineLaunch({ dataDirectory: "/mine" }, inherited, folder, home);
  assert.equal(replaced.env.LAZY_DATA, path.resolve("/mine"));
});

test("the engine is told it serves an editor, so saves are the human's", () => {
  const inherited = { LAZY_EDITOR: "", LAZY_ACTOR: "some-builder" };
  const launch = engineLaunch({}, inherited, folder, home);
  assert.equal(launch.env.LAZY_EDITOR, "vscode");
  // LAZY_ACTOR names builders; the engine of an editor ignores it, as the CLI does.
  assert.equal(launch.env.LAZY_ACTOR, "some-builder");
});

test("settings of the wrong type are ignored with a warning", () => {
  const launch = engineLaunch({ dataDirectory: 5 }, {}, folder, home);
  assert.equal(launch.env.LAZY_DATA, undefined);
  assert.equal(launch.warnings.length, 1);
});
