// The tree's index on a store that cannot be read, against the real engine (runningEngine.ts):
// the engine's marker, never the empty index an empty store shows.

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";

import { recordIndex } from "../wire";
import { DATA_DIRECTORY, RunningEngine, skip, startEngine } from "./runningEngine";

let engine: RunningEngine;

before(async () => {
  if (!skip) {
    engine = await startEngine((project) => {
      const store = path.join(project, DATA_DIRECTORY);
      fs.mkdirSync(store);
      fs.writeFileSync(path.join(store, "memory.db"), "not a database at all ".repeat(200));
    });
  }
});

after(async () => {
  if (!skip) {
    await engine.stop();
  }
});

test("a corrupt store's index is the engine's marker, not an empty one", { skip }, async () => {
  const index = await recordIndex(engine.send);
  assert.equal(index.records, undefined);
  assert.match(index.unavailable ?? "", /^MEMORY INDEX UNAVAILABLE \(.*memory\.db.*\)\n/);
  const context = await engine.send<{ text: string }>("lazy/memory/context", { role: "builder" });
  assert.equal(index.unavailable, context.text, "the same marker as a launch gets");
});
