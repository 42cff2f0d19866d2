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
};
process.stdout.write(JSON.stringify(observations));
