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
import { realpathSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..", "..");
const bin = process.env.RUNLS_BIN || path.join(repo, "bin", "runls");
const run = realpathSync(path.join(repo, "testdata", "sample-run"));

let client;
let stderr = "";

before(async () => {
  // The SDK gives the server a sanitized environment (no RUNLS_CACHE_DIR):
  // --no-cache keeps the test out of the user's cache folder.
  const transport = new StdioClientTransport({ command: bin, args: ["mcp", "--no-cache", run], stderr: "pipe" });
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

test("search answers what runls search --json answers", async () => {
  const args = { query: "deploy database migration", episode: "episode-2", conversation: "conv-1", topK: 10 };
  const res = await client.callTool({ name: "search", arguments: args });
  assert.equal(res.isError, undefined, JSON.stringify(res));
  const got = res.structuredContent.items.map((it) => [it.location.path, it.location.line, it.text, it.score]);
  const cli = JSON.parse(
    execFileSync(bin, ["search", "--json", "--episode", "episode-2", "--conversation", "conv-1", "--top-k", "10", run, args.query]),
  );
  const want = cli.items.map((it) => [
    path.relative(run, fileURLToPath(it.location.uri)),
    it.location.range.start.line + 1,
    it.text,
    it.score,
  ]);
  assert.ok(want.length > 0);
  assert.deepEqual(got, want);
  const lines = res.content[0].text.trim().split("\n");
  assert.equal(lines[0], `${got[0][0]}:${got[0][1]}: ${got[0][2]}`);
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
