// The cross-implementation check of `runls mcp`: the TypeScript MCP SDK's
// client (the one most agent harnesses are built on) starts the built binary
// over stdio, lists the tools (its client compiles their output schemas and
// validates every structured result against them), calls each tool, and
// compares a search with `runls search --json` and records with `runls
// records --json`.
//
// RUNLS_BIN names the binary; the sample run is the repository's.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..", "..");
const bin = process.env.RUNLS_BIN || path.join(repo, "bin", "runls");
const run = realpathSync(path.join(repo, "testdata", "sample-run"));

let client;
let stderr = "";

before(async () => {
  // The SDK gives the server a sanitized environment (no RUNLS_CACHE_DIR):
  // --no-cache keeps the test out of the user's cache folder.
  // The flag after the run folder, as client configurations often put it.
  const transport = new StdioClientTransport({ command: bin, args: ["mcp", run, "--no-cache"], stderr: "pipe" });
  transport.stderr?.on("data", (d) => (stderr += d));
  client = new Client({ name: "runls-tsclient", version: "0" });
  await client.connect(transport);
});

after(async () => {
  await client?.close();
});

test("the server says who it is and how to search", () => {
  assert.equal(client.getServerVersion().name, "runls");
  assert.match(client.getInstructions(), /run_info/);
  assert.ok(client.getServerCapabilities().tools);
});

test("four read-only tools with object schemas", async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ["read", "records", "run_info", "search"]);
  for (const t of tools) {
    assert.equal(t.annotations.readOnlyHint, true, t.name);
    assert.equal(t.annotations.destructiveHint, false, t.name);
    assert.equal(t.inputSchema.type, "object", t.name);
    assert.equal(t.outputSchema.type, "object", t.name);
  }
  const search = tools.find((t) => t.name === "search");
  assert.equal(search.inputSchema.properties.topK.maximum, 50);
  const records = tools.find((t) => t.name === "records");
  assert.equal(records.inputSchema.properties.limit.maximum, 500);
  assert.deepEqual(records.inputSchema.required, ["episode"]);
});

test("records answers what runls records --json answers, page by page", async () => {
  const args = { episode: "episode-2", conversation: "conv-1", limit: 4 };
  const flags = () => ["records", "--json", "--conversation", "conv-1", "--limit", "4", ...(args.cursor ? ["--cursor", args.cursor] : []), run, "episode-2"];
  let got = [];
  let want = [];
  for (let page = 0; page < 50; page++) {
    const res = await client.callTool({ name: "records", arguments: args });
    assert.equal(res.isError, undefined, JSON.stringify(res));
    const sc = res.structuredContent;
    got.push(...sc.records.map((r) => [r.location.path, r.location.line, r.location.endLine, r.time, r.level, r.conversation, r.agent, r.text]));
    const cli = JSON.parse(execFileSync(bin, flags()));
    want.push(
      ...cli.records.map((r) => [
        path.relative(run, fileURLToPath(r.location.uri)),
        r.location.range.start.line + 1,
        r.location.range.end.line + 1,
        r.time ?? undefined,
        r.level ?? undefined,
        r.conversation ?? undefined,
        r.agent,
        r.text,
      ]),
    );
    assert.equal(sc.cursor, cli.cursor ?? undefined);
    if (!sc.cursor) break;
    args.cursor = sc.cursor;
  }
  assert.ok(want.length > 4);
  assert.deepEqual(got, want);
});

// toolShape is a run/search result (runls search --json) as the search tool
// gives it: each location a path relative to the run folder and a 1-based
// line, each null left out.
function toolShape(result) {
  const dropNulls = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));
  return {
    items: result.items.map((it) =>
      dropNulls({
        ...it,
        location: { path: path.relative(run, fileURLToPath(it.location.uri)), line: it.location.range.start.line + 1 },
      }),
    ),
    hidden: result.hidden,
    notices: result.notices.map(dropNulls),
  };
}

test("search's structured content is the run/search result, field by field", async () => {
  const cases = [
    [{ query: "deploy database migration", episode: "episode-2", conversation: "conv-1", topK: 10 }, []],
    [{ query: "deploy database migration" }, []], // hidden: noContext
    [{ query: "hotel booking rooms", episode: "episode-2", conversation: "conv-1" }, []], // hidden: otherConversation
    [{ query: "deploy migration", episode: "episode-1", conversation: "conv-1", topK: 20 }, []], // hidden: unfielded
    [{ query: "deploy", episode: "episode-2", conversation: "conv-1", scope: "episode", topK: 20 }, []], // hidden: scope
    [{ query: "deploy", agent: "BOB", episode: "episode-9", conversation: "conv-1" }, []], // notices, a suggestion
    [{ query: "café crème", episode: "episode-2", conversation: "conv-1" }, []], // UTF-16 matches
  ];
  const seen = new Set();
  for (const [args] of cases) {
    const res = await client.callTool({ name: "search", arguments: args });
    assert.equal(res.isError, undefined, JSON.stringify(res));
    const flags = ["search", "--json", "--no-cache", "--top-k", String(args.topK ?? 10)];
    for (const [k, flag] of [["agent", "--agent"], ["episode", "--episode"], ["conversation", "--conversation"], ["scope", "--scope"]]) {
      if (args[k]) flags.push(flag, args[k]);
    }
    let out;
    try {
      out = execFileSync(bin, [...flags, run, args.query], { stdio: ["ignore", "pipe", "ignore"] });
    } catch (e) {
      out = e.stdout; // exit 1: nothing found
    }
    const want = toolShape(JSON.parse(out));
    const got = { items: res.structuredContent.items, hidden: res.structuredContent.hidden, notices: res.structuredContent.notices };
    assert.deepEqual(got, want, JSON.stringify(args));
    for (const k of Object.keys(got.hidden)) seen.add(`hidden.${k}`);
    if (got.notices.length) seen.add("notices");
    if (got.notices.some((n) => n.suggestion)) seen.add("suggestion");
    if (got.items.some((it) => it.time && it.level && it.conversation && it.matches.length)) seen.add("record fields");
    // The text ends with what the filters hid and the notices, in words.
    const text = res.content[0].text;
    if (Object.keys(got.hidden).length) assert.match(text, /the filters hid \d+ of the \d+ best pieces/);
    for (const n of got.notices) assert.ok(text.includes(n.message), `${text} lacks ${n.message}`);
    if (got.items.length) {
      const first = text.split("\n")[0];
      assert.equal(first, `${got.items[0].location.path}:${got.items[0].location.line}: ${got.items[0].text}`);
    }
  }
  for (const k of ["hidden.noContext", "hidden.otherConversation", "hidden.unfielded", "hidden.scope", "notices", "suggestion", "record fields"]) {
    assert.ok(seen.has(k), `no case shows ${k}`);
  }
});

test('arguments given as "" are absent, in every tool', async () => {
  const search = await client.callTool({
    name: "search",
    arguments: { query: "deploy", episode: "episode-2", conversation: "conv-1", scope: "", agent: "", turnMessage: "", topK: "" },
  });
  assert.equal(search.isError, undefined, JSON.stringify(search));
  const plain = await client.callTool({ name: "search", arguments: { query: "deploy", episode: "episode-2", conversation: "conv-1" } });
  assert.deepEqual(search.structuredContent, plain.structuredContent);
  const records = await client.callTool({ name: "records", arguments: { episode: "episode-2", minLevel: "", cursor: "", from: "", to: "", limit: "" } });
  assert.equal(records.isError, undefined, JSON.stringify(records));
  const read = await client.callTool({ name: "read", arguments: { path: "episode-2/bob/bob.log", startLine: "", endLine: "" } });
  assert.equal(read.isError, undefined, JSON.stringify(read));
  const noPath = await client.callTool({ name: "read", arguments: { path: "" } });
  assert.equal(noPath.isError, true);
  assert.match(noPath.content[0].text, /missing argument path/);
});

test("read gives the lines of a search hit", async () => {
  const res = await client.callTool({ name: "read", arguments: { path: "episode-2/bob/bob.log", startLine: 1, endLine: 3 } });
  assert.equal(res.isError, undefined, JSON.stringify(res));
  assert.deepEqual(res.structuredContent.lines.map((l) => l.line), [1, 2, 3]);
  assert.match(res.content[0].text, /^episode-2\/bob\/bob\.log:1: /);
});

test("run_info lists the episodes in order", async () => {
  const res = await client.callTool({ name: "run_info", arguments: {} });
  assert.deepEqual(res.structuredContent.episodes.map((e) => e.episode), ["episode-1", "episode-2", "episode-3", "episode-10"]);
  assert.deepEqual(res.structuredContent.episodes[1].conversations, ["conv-1", "conv-2", "conv-3"]);
});

test("bad arguments are tool errors naming the argument", async () => {
  for (const [name, args, field] of [
    ["search", { query: "x", topK: 51 }, "topK"],
    ["search", { query: "x", topK: "ten" }, "topK"],
    ["search", { query: "x", episode: "2" }, "episode"],
    ["read", { path: "../../etc/passwd" }, "path"],
    ["read", { path: "/proc/self/environ" }, "path"],
    ["read", {}, "path"],
    ["records", { conversation: "conv-1" }, "episode"],
    ["records", { episode: "episode-2", limit: 501 }, "limit"],
    ["records", { episode: "episode-2", cursor: "x" }, "cursor"],
  ]) {
    const res = await client.callTool({ name, arguments: args });
    assert.equal(res.isError, true, JSON.stringify(args));
    assert.match(res.content[0].text, new RegExp(field), JSON.stringify(args));
  }
});

test("an unknown tool is a JSON-RPC error, and the session goes on", async () => {
  const res = await client.callTool({ name: "no_such_tool", arguments: {} }).then(
    (r) => r,
    (e) => e,
  );
  assert.ok(res instanceof Error || res.isError === true, String(res));
  assert.match(String(res.message ?? res.content?.[0]?.text), /no_such_tool/);
  const again = await client.callTool({ name: "run_info", arguments: {} });
  assert.equal(again.isError, undefined);
});

test("the server wrote nothing to stderr but its warnings", () => {
  assert.doesNotMatch(stderr, /panic|goroutine/);
});

// RUNLS_HOLD_BIN (test.sh builds it with -tags runls_holdindex) holds its first index
// after one batch until the file RUNLS_HOLD_INDEX names exists.
test("search while the run is indexed: the structured result has the indexing notice, the text says first it is partial; whole once released", async (t) => {
  const hold = process.env.RUNLS_HOLD_BIN;
  if (!hold) return t.skip("RUNLS_HOLD_BIN unset: no runls built with -tags runls_holdindex");
  const dir = mkdtempSync(path.join(os.tmpdir(), "runls-mcp-partial-"));
  try {
    const copy = path.join(dir, "run");
    cpSync(run, copy, { recursive: true });
    const release = path.join(dir, "release");
    const transport = new StdioClientTransport({
      command: hold,
      args: ["mcp", copy, "--no-cache"],
      env: { ...getDefaultEnvironment(), RUNLS_HOLD_INDEX: release },
      stderr: "pipe",
    });
    const held = new Client({ name: "runls-tsclient-partial", version: "0" });
    await held.connect(transport);
    try {
      const args = { query: "deploy database migration", episode: "episode-2", conversation: "conv-1" };
      // The client validates the structured result against the tool's output schema.
      const res = await held.callTool({ name: "search", arguments: args });
      assert.equal(res.isError, undefined, JSON.stringify(res));
      const notice = res.structuredContent.notices.find((n) => n.field === "indexing");
      assert.ok(notice && /^\d+%$/.test(notice.value), JSON.stringify(res.structuredContent.notices));
      assert.match(res.content[0].text, /^\(partial answer: the run is still being indexed, \d+% of it so far/);
      const info = await held.callTool({ name: "run_info", arguments: {} });
      assert.equal(info.structuredContent.indexing.done, false);

      writeFileSync(release, "");
      let whole;
      for (let i = 0; i < 300; i++) {
        const r = await held.callTool({ name: "search", arguments: args });
        if (!r.structuredContent.notices.some((n) => n.field === "indexing")) {
          whole = r;
          break;
        }
        await new Promise((ok) => setTimeout(ok, 100));
      }
      assert.ok(whole, "still partial 30 s after the release");
      assert.doesNotMatch(whole.content[0].text, /partial/);
      const cli = JSON.parse(execFileSync(bin, ["search", "--json", "--no-cache", "--episode", "episode-2", "--conversation", "conv-1", "--top-k", "10", copy, "deploy", "database", "migration"]));
      assert.deepEqual(
        whole.structuredContent.items.map((it) => [it.location.path, it.location.line, it.text]),
        cli.items.map((it) => [path.relative(copy, fileURLToPath(it.location.uri)), it.location.range.start.line + 1, it.text]),
      );
    } finally {
      await held.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
