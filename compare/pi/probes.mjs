// Observations of the Pi SDK (@earendil-works/pi-ai and pi-agent-core, pinned in package.json).
// Run by compare/conftest.py as `node compare/pi/probes.mjs`; it prints one JSON object, one key
// per probe, and the Python probes in compare/ assert what the pages say about each value.
// Everything runs in process: the faux provider is Pi's own test model, so no network is used.
import { readFileSync } from "node:fs";
import {
  EventStream,
  Type,
  fauxAssistantMessage,
  fauxToolCall,
  parseStreamingJson,
  validateToolArguments,
} from "@earendil-works/pi-ai";
import { registerFauxProvider, streamSimple } from "@earendil-works/pi-ai/compat";
import { runAgentLoop } from "@earendil-works/pi-agent-core";

// A file of an installed package, read as text (its `exports` hide most of them from import).
function packageFile(name, path) {
  return readFileSync(new URL(`./node_modules/@earendil-works/${name}/${path}`, import.meta.url), "utf8");
}

function versions() {
  const read = (name) => JSON.parse(packageFile(name, "package.json")).version;
  return { "pi-ai": read("pi-ai"), "pi-agent-core": read("pi-agent-core") };
}

// Page 02: the EventStream that checkpoint 02 follows.
async function eventStream() {
  const isEnd = (event) => event === "end";
  const stream = new EventStream(isEnd, () => "result");
  stream.push("a");
  stream.push("end");
  stream.push("after end");
  const seen = [];
  for await (const event of stream) seen.push(event);
  const result = await stream.result();

  const shared = new EventStream(() => false, () => undefined);
  const first = shared[Symbol.asyncIterator]();
  const second = shared[Symbol.asyncIterator]();
  const firstNext = first.next();
  const secondNext = second.next();
  shared.push(1);
  shared.push(2);
  const split = [(await firstNext).value, (await secondNext).value];

  const unended = new EventStream(() => false, () => undefined);
  unended.end();
  const pending = await Promise.race([
    unended.result().then(() => "settled"),
    new Promise((resolve) => setTimeout(() => resolve("pending"), 20)),
  ]);
  return { seen, result, split, endWithoutResult: pending };
}

async function collect(events) {
  const types = [];
  let last;
  for await (const event of events) {
    types.push(event.type);
    last = event;
  }
  return { types, last };
}

// Page 04: the faux provider, Pi's scripted model.
async function fauxProvider() {
  const faux = registerFauxProvider({ tokenSize: { min: 1, max: 1 } });
  const model = faux.getModel();
  const context = { messages: [{ role: "user", content: "hi", timestamp: 0 }] };
  try {
    faux.setResponses([fauxAssistantMessage("hello there")]);
    faux.appendResponses([
      () => {
        throw new Error("factory failed");
      },
    ]);
    const pendingBefore = faux.getPendingResponseCount();
    const first = await collect(streamSimple(model, context));
    const thrown = await collect(streamSimple(model, context));
    const exhausted = await collect(streamSimple(model, context));
    const controller = new AbortController();
    faux.setResponses([fauxAssistantMessage("a long answer that streams in many deltas")]);
    const aborted = streamSimple(model, context, { signal: controller.signal });
    const abortedTypes = [];
    let abortedLast;
    for await (const event of aborted) {
      abortedTypes.push(event.type);
      abortedLast = event;
      if (event.type === "text_delta") controller.abort();
    }
    return {
      pendingBefore,
      firstDeltas: first.types.filter((type) => type === "text_delta").length,
      firstLast: first.last.type,
      thrown: { type: thrown.last.type, message: thrown.last.error.errorMessage },
      exhausted: {
        type: exhausted.last.type,
        stopReason: exhausted.last.error.stopReason,
        message: exhausted.last.error.errorMessage,
      },
      aborted: { type: abortedLast.type, stopReason: abortedLast.error.stopReason },
      callCount: faux.state.callCount,
      handleKeys: Object.keys(faux).sort(),
    };
  } finally {
    faux.unregister();
  }
}

// Pages 05 and 06: what the agent loop does to a call's arguments before `execute`.
function argumentValidation() {
  const typebox = {
    name: "add",
    parameters: Type.Object({ left: Type.Integer(), right: Type.Integer() }),
  };
  const jsonSchema = {
    name: "add",
    parameters: {
      type: "object",
      properties: { left: { type: "integer" }, right: { type: "integer" } },
      required: ["left", "right"],
    },
  };
  const call = (args) => ({ type: "toolCall", id: "c1", name: "add", arguments: args });
  const attempt = (tool, args) => {
    try {
      return { ok: validateToolArguments(tool, call(args)) };
    } catch (error) {
      return { error: error.message };
    }
  };
  return {
    typeboxString: attempt(typebox, { left: "2", right: 3 }),
    typeboxExtra: attempt(typebox, { left: 2, right: 3, extra: true }),
    typeboxNull: attempt(typebox, { left: null, right: 3 }),
    typeboxWrong: attempt(typebox, { left: "two", right: 3 }),
    jsonSchemaString: attempt(jsonSchema, { left: "2", right: 3 }),
    jsonSchemaNull: attempt(jsonSchema, { left: null, right: 3 }),
    jsonSchemaExtra: attempt(jsonSchema, { left: 2, right: 3, extra: true }),
  };
}

// Page 05: what the providers do with argument text that stops early.
function truncatedArguments() {
  const providerSource = packageFile("pi-ai", "dist/api/openai-completions.js");
  return {
    openString: parseStreamingJson('{"path": "a'),
    openLiteral: parseStreamingJson('{"a": tru'),
    garbage: parseStreamingJson("not json"),
    duplicate: parseStreamingJson('{"a": 1, "a": 2}'),
    completionsProviderParsesWithIt: providerSource.includes(
      "block.arguments = parseStreamingJson(block.partialArgs)",
    ),
  };
}

// Page 06: one agent-loop turn with tools, driven by the faux provider.
async function agentLoopTurn(toolCalls, tools, options = {}) {
  const faux = registerFauxProvider({ tokenSize: { min: 64, max: 64 } });
  try {
    faux.setResponses([
      fauxAssistantMessage(toolCalls, { stopReason: options.stopReason ?? "toolUse" }),
      fauxAssistantMessage("done"),
    ]);
    const messages = await runAgentLoop(
      [{ role: "user", content: "go", timestamp: 0 }],
      { systemPrompt: "", messages: [], tools },
      { model: faux.getModel(), convertToLlm: (all) => all, toolExecution: options.mode },
      async () => {},
      (options.controller ?? new AbortController()).signal,
      streamSimple,
    );
    return {
      results: messages
        .filter((message) => message.role === "toolResult")
        .map((message) => ({
          isError: message.isError,
          text: message.content.map((block) => block.text).join(""),
          keys: Object.keys(message).sort(),
        })),
      modelCalls: faux.state.callCount,
    };
  } finally {
    faux.unregister();
  }
}

async function toolExecution() {
  const received = [];
  const add = {
    name: "add",
    label: "Add",
    description: "add two integers",
    parameters: Type.Object({ left: Type.Integer(), right: Type.Integer() }),
    execute: async (id, params, signal) => {
      received.push({ params, signalIsAbortSignal: signal instanceof AbortSignal });
      return { content: [{ type: "text", text: String(params.left + params.right) }], details: {} };
    },
  };
  const fail = {
    name: "fail",
    label: "Fail",
    description: "always throws",
    parameters: Type.Object({}),
    execute: async () => {
      throw new Error("disk on fire");
    },
  };
  const stop = (name) => ({
    name,
    label: name,
    description: "finishes the run",
    parameters: Type.Object({}),
    execute: async () => ({ content: [{ type: "text", text: "stop" }], details: {}, terminate: true }),
  });
  const coerced = await agentLoopTurn([fauxToolCall("add", { left: "2", right: 3, extra: 1 })], [add]);
  const invalid = await agentLoopTurn([fauxToolCall("add", { left: "two", right: 3 })], [add]);
  const thrown = await agentLoopTurn([fauxToolCall("fail", {})], [fail]);
  const unknown = await agentLoopTurn([fauxToolCall("missing", {})], [add]);
  const terminated = await agentLoopTurn(
    [fauxToolCall("stop_a", {}), fauxToolCall("stop_b", {})],
    [stop("stop_a"), stop("stop_b")],
  );
  const mixed = await agentLoopTurn(
    [fauxToolCall("stop_a", {}), fauxToolCall("add", { left: 1, right: 1 })],
    [stop("stop_a"), add],
  );
  const truncated = await agentLoopTurn(
    [fauxToolCall("add", { left: 1, right: 2 })],
    [add],
    { stopReason: "length" },
  );
  const abortedBatch = {};
  for (const mode of ["sequential", "parallel"]) {
    const controller = new AbortController();
    const ran = [];
    const step = (name, abort) => ({
      name,
      label: name,
      description: "records that it ran",
      parameters: Type.Object({}),
      execute: async () => {
        ran.push(name);
        if (abort) controller.abort();
        return { content: [{ type: "text", text: name }], details: {} };
      },
    });
    const turn = await agentLoopTurn(
      [fauxToolCall("first", {}), fauxToolCall("second", {})],
      [step("first", true), step("second", false)],
      { mode, controller },
    );
    abortedBatch[mode] = { ran, results: turn.results.map((result) => result.text) };
  }
  return { received, coerced, invalid, thrown, unknown, terminated, mixed, truncated, abortedBatch };
}

// Page 07: how the agent loop runs the calls of one assistant message, and what an abort leaves.
async function agentLoopBatch(toolCalls, tools, options = {}) {
  const faux = registerFauxProvider({ tokenSize: { min: 64, max: 64 } });
  const events = [];
  try {
    faux.setResponses([fauxAssistantMessage(toolCalls, { stopReason: "toolUse" }), fauxAssistantMessage("done")]);
    const messages = await runAgentLoop(
      [{ role: "user", content: "go", timestamp: 0 }],
      { systemPrompt: "", messages: [], tools },
      { model: faux.getModel(), convertToLlm: (all) => all, toolExecution: options.mode },
      async (event) => {
        if (event.type.startsWith("tool_execution")) events.push({ type: event.type, id: event.toolCallId, partial: event.partialResult?.content?.[0]?.text });
      },
      (options.controller ?? new AbortController()).signal,
      streamSimple,
    );
    const calls = messages
      .filter((message) => message.role === "assistant")
      .flatMap((message) => message.content.filter((block) => block.type === "toolCall").map((block) => block.id));
    return {
      calls,
      results: messages
        .filter((message) => message.role === "toolResult")
        .map((message) => ({ id: message.toolCallId, isError: message.isError, text: message.content.map((block) => block.text).join("") })),
      events,
      modelCalls: faux.state.callCount,
    };
  } finally {
    faux.unregister();
  }
}

// A turn of the event loop: lets every other started tool run up to its next await.
const tick = () => new Promise((resolve) => setImmediate(resolve));

async function agentLoop() {
  const log = [];
  // A tool that logs its start, yields `ticks` times, logs its end: overlapping logs mean the
  // calls ran concurrently, and fewer ticks finish first.
  const worker = (name, ticks, executionMode) => ({
    name,
    label: name,
    description: "yields, then returns its name",
    parameters: Type.Object({}),
    executionMode,
    execute: async () => {
      log.push(`start ${name}`);
      for (let i = 0; i < ticks; i += 1) await tick();
      log.push(`end ${name}`);
      return { content: [{ type: "text", text: name }], details: {} };
    },
  });
  const batch = async (tools, mode) => {
    log.length = 0;
    const turn = await agentLoopBatch(tools.map((tool, index) => fauxToolCall(tool.name, {}, { id: `c${index}` })), tools, { mode });
    return { log: [...log], results: turn.results.map((result) => result.text) };
  };
  const parallel = await batch([worker("a", 4), worker("b", 1)], undefined); // the default mode
  const sequential = await batch([worker("a", 4), worker("b", 1)], "sequential");
  const oneSequentialTool = await batch([worker("a", 4), worker("s", 1, "sequential"), worker("b", 1)], "parallel");

  // An abort while two calls run at once: one tool honours its signal, the other ignores it.
  const controller = new AbortController();
  let started = 0;
  const honours = {
    name: "honours",
    label: "honours",
    description: "stops when its signal aborts",
    parameters: Type.Object({}),
    execute: (id, params, signal) => new Promise((resolve, reject) => {
      started += 1;
      signal.addEventListener("abort", () => reject(new Error("stopped by its signal")));
    }),
  };
  const ignores = {
    name: "ignores",
    label: "ignores",
    description: "finishes whatever its signal says",
    parameters: Type.Object({}),
    execute: async () => {
      started += 1;
      while (started < 2) await tick();
      controller.abort();
      for (let i = 0; i < 3; i += 1) await tick();
      return { content: [{ type: "text", text: "finished anyway" }], details: {} };
    },
  };
  const abortedWhileRunning = await agentLoopBatch(
    [fauxToolCall("honours", {}, { id: "c0" }), fauxToolCall("ignores", {}, { id: "c1" })],
    [honours, ignores],
    { mode: "parallel", controller },
  );

  // An abort during the first of three calls run in sequence.
  const sequenceController = new AbortController();
  const first = {
    name: "first",
    label: "first",
    description: "aborts the run, then returns",
    parameters: Type.Object({}),
    execute: async () => {
      sequenceController.abort();
      return { content: [{ type: "text", text: "first" }], details: {} };
    },
  };
  const abortedInSequence = await agentLoopBatch(
    ["c0", "c1", "c2"].map((id, index) => fauxToolCall(index === 0 ? "first" : "add", { left: 1, right: 2 }, { id })),
    [first, { ...worker("add", 0), parameters: Type.Object({ left: Type.Integer(), right: Type.Integer() }) }],
    { mode: "sequential", controller: sequenceController },
  );

  // Progress: `onUpdate` while the tool runs becomes tool_execution_update; a call after the
  // tool returned is dropped.
  let keptUpdate;
  const reporter = {
    name: "reporter",
    label: "reporter",
    description: "reports progress twice",
    parameters: Type.Object({}),
    execute: async (id, params, signal, onUpdate) => {
      onUpdate({ content: [{ type: "text", text: "half" }], details: {} });
      onUpdate({ content: [{ type: "text", text: "all" }], details: {} });
      keptUpdate = onUpdate;
      return { content: [{ type: "text", text: "done" }], details: {} };
    },
  };
  const progress = await agentLoopBatch([fauxToolCall("reporter", {}, { id: "c0" })], [reporter]);
  keptUpdate({ content: [{ type: "text", text: "late" }], details: {} });
  await tick();

  const loopSource = packageFile("pi-agent-core", "dist/agent-loop.js");
  const agentTypes = packageFile("pi-agent-core", "dist/types.d.ts");
  return {
    parallel,
    sequential,
    oneSequentialTool,
    abortedWhileRunning: abortedWhileRunning.results,
    abortedInSequence: { calls: abortedInSequence.calls, results: abortedInSequence.results },
    progressEvents: progress.events,
    timeoutMentioned: /timeout/i.test(loopSource) || /timeout/i.test(agentTypes),
  };
}

// Page 08: the Pi coding agent's own tools (read, write, bash), each run on a temporary folder:
// which paths they accept, how bash's output is bounded, and how a timeout stops a command.
async function codingTools() {
  const { mkdtempSync, mkdirSync, writeFileSync, readFileSync: readText, existsSync, symlinkSync, rmSync, realpathSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join, dirname } = await import("node:path");
  // By file: the package's root import loads dist/experimental/server.js, which imports
  // @earendil-works/pi-server, a package 0.85.0 does not declare (ERR_MODULE_NOT_FOUND).
  const tools = await import(
    new URL("./node_modules/@earendil-works/pi-coding-agent/dist/core/tools/index.js", import.meta.url)
  );
  const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-probe-")));
  const cwd = join(root, "workspace");
  mkdirSync(cwd);
  writeFileSync(join(root, "outside.txt"), "outside the workspace\n");
  symlinkSync(join(root, "outside.txt"), join(cwd, "link.txt"));
  const text = (result) => result.content.map((block) => block.text).join("");
  const attempt = async (tool, params, signal) => {
    try {
      return { ok: text(await tool.execute("c1", params, signal, () => {})) };
    } catch (error) {
      return { error: error.message };
    }
  };
  const savedTmp = process.env.TMPDIR;
  process.env.TMPDIR = root; // the bash tool's spill file lands in os.tmpdir()
  process.env.PI_PROBE_SECRET = "hunter2";
  try {
    const read = tools.createReadTool(cwd);
    const write = tools.createWriteTool(cwd);
    const bash = tools.createBashTool(cwd);
    const readDotDot = await attempt(read, { path: "../outside.txt" });
    const readAbsolute = await attempt(read, { path: join(root, "outside.txt") });
    const readLink = await attempt(read, { path: "link.txt" });
    const writeDotDot = await attempt(write, { path: "../made/by/write.txt", content: "written" });
    const written = existsSync(join(root, "made", "by", "write.txt"));

    const long = await attempt(bash, { command: "seq 1 3000" });
    const spill = /Full output: (\S+)\]$/.exec(long.ok ?? "")?.[1];
    const env = await attempt(bash, { command: 'echo "secret=$PI_PROBE_SECRET"' });

    // A command whose grandchild ignores SIGTERM: a TERM trap would write term.txt.
    const command =
      "trap 'echo term > term.txt' TERM; (trap '' TERM; exec sleep 30) & echo $! > pid.txt; wait";
    const timedOut = await attempt(bash, { command, timeout: 0.5 });
    const grandchild = Number(readText(join(cwd, "pid.txt"), "utf8").trim());
    const alive = () => {
      try {
        const stat = readText(`/proc/${grandchild}/stat`, "utf8");
        return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
      } catch {
        return false; // gone from /proc
      }
    };
    // SIGKILL is delivered at once, but the kernel ends a process in its own time: look again
    // for up to two seconds (the harness waiting on the kernel, as checkpoint 08 does).
    for (let i = 0; i < 200 && alive(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    const bashSource = packageFile("pi-coding-agent", "dist/core/tools/bash.js");
    return {
      version: JSON.parse(packageFile("pi-coding-agent", "package.json")).version,
      readDotDot,
      readAbsolute,
      readLink,
      writeDotDot: { ...writeDotDot, written },
      limits: { maxLines: tools.DEFAULT_MAX_LINES, maxBytes: tools.DEFAULT_MAX_BYTES },
      bashLong: {
        first: (long.ok ?? "").split("\n")[0],
        marker: (long.ok ?? "").split("\n").at(-1).replace(spill ?? "", "SPILL"),
        spillInTmpdir: spill !== undefined && dirname(spill) === root,
        spillLines: spill ? readText(spill, "utf8").trim().split("\n").length : 0,
      },
      bashEnv: env.ok,
      bashTimeout: {
        error: timedOut.error,
        grandchildAlive: alive(),
        termTrapRan: existsSync(join(cwd, "term.txt")),
      },
      bashHasNoDefaultTimeout: bashSource.includes("Timeout in seconds (optional, no default timeout)"),
    };
  } finally {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    delete process.env.PI_PROBE_SECRET;
    rmSync(root, { recursive: true, force: true });
  }
}

// Pages 01 and 03: the message and content-block types.
function declaredTypes() {
  const types = packageFile("pi-ai", "dist/types.d.ts");
  const agentTypes = packageFile("pi-agent-core", "dist/types.d.ts");
  const interfaceBody = (source, name) => {
    const start = source.indexOf(`export interface ${name}`);
    return start < 0 ? "" : source.slice(start, source.indexOf("\n}", start));
  };
  const faux = packageFile("pi-ai", "dist/providers/faux.d.ts");
  return {
    fauxOptions: interfaceBody(faux, "RegisterFauxProviderOptions {"),
    fauxRegistration: interfaceBody(faux, "FauxProviderRegistration {"),
    toolCall: interfaceBody(types, "ToolCall {"),
    toolResultMessage: interfaceBody(types, "ToolResultMessage<"),
    userMessage: interfaceBody(types, "UserMessage {"),
    messageUnion: /export type Message = ([^;]+);/.exec(types)?.[1] ?? "",
    agentTool: interfaceBody(agentTypes, "AgentTool<"),
    agentToolResult: interfaceBody(agentTypes, "AgentToolResult<"),
  };
}

const observations = {
  versions: versions(),
  eventStream: await eventStream(),
  fauxProvider: await fauxProvider(),
  argumentValidation: argumentValidation(),
  truncatedArguments: truncatedArguments(),
  toolExecution: await toolExecution(),
  declaredTypes: declaredTypes(),
  agentLoop: await agentLoop(),
  codingTools: await codingTools(),
};
process.stdout.write(JSON.stringify(observations));
