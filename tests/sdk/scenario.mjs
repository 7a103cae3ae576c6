// Drives the real TypeScript Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`) against a CLI,
// for tests/sdk.rs.
//
// Usage: node tests/sdk/scenario.mjs NAME
//
// Environment: RELOOP_BIN (the CLI the SDK launches, via pathToClaudeCodeExecutable), WORKDIR (the
// agent's cwd), RELOOP_SDK_DIR (where scripts/sdk-setup.sh installed the SDK; default target/sdk),
// ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY / RELOOP_JOURNAL (inherited by the CLI).
//
// Prints every message the SDK yields as one JSON line (as the SDK hands it over), `{"event": ...}`
// lines for callbacks the SDK invoked, and `{"error": ...}` if the SDK threw (exit 1). Every scenario
// has a hard timeout, so a CLI that hangs fails the test instead of hanging it.

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const sdkDir = process.env.RELOOP_SDK_DIR || path.join(here, "..", "..", "target", "sdk");
const sdkEntry = path.join(sdkDir, "node", "node_modules", "@anthropic-ai", "claude-agent-sdk", "sdk.mjs");
const TIMEOUT_MS = Number(process.env.SDK_SCENARIO_TIMEOUT || "60") * 1000;

const emit = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

const abortController = new AbortController();

function options(extra = {}) {
  return {
    pathToClaudeCodeExecutable: process.env.RELOOP_BIN,
    cwd: process.env.WORKDIR,
    abortController,
    // The CLI's stderr is piped by the SDK; pass it on so a failing test shows it.
    stderr: (data) => process.stderr.write(data),
    ...extra,
  };
}

/** Runs one query(), printing every message; returns the result messages. */
async function runQuery(query, prompt, extra = {}, onMessage = () => {}) {
  const results = [];
  for await (const message of query({ prompt, options: options(extra) })) {
    emit(message);
    if (message.type === "result") results.push(message);
    onMessage(message);
  }
  return results;
}

function userMessage(text) {
  return { type: "user", session_id: "", message: { role: "user", content: text }, parent_tool_use_id: null };
}

const scenarios = {
  async oneshot_tool({ query }) {
    await runQuery(query, "read a.txt");
  },

  // Two user messages in one CLI process: an async-iterable prompt that yields the second message
  // once the first turn's result has arrived.
  // outputFormat and agents with model aliases, as the TypeScript demos pass them.
  async structured_agents({ query }) {
    const schema = { type: "object", properties: { file: { type: "string" }, issues: { type: "integer" } },
      required: ["file", "issues"] };
    await runQuery(query, "review a.txt with the reviewer", {
      model: "sonnet",
      outputFormat: { type: "json_schema", schema },
      agents: { reviewer: { description: "Reviews one file.", prompt: "You are a strict reviewer.", tools: ["Read"], model: "haiku" } },
    });
  },

  async two_turns({ query }) {
    let firstResult;
    const firstDone = new Promise((resolve) => (firstResult = resolve));
    async function* prompt() {
      yield userMessage("first question");
      await firstDone;
      yield userMessage("second question");
    }
    await runQuery(query, prompt(), {}, (message) => {
      if (message.type === "result") firstResult();
    });
  },

  async can_use_tool({ query }) {
    const canUseTool = async (toolName, input, context) => {
      const allow = String(input.file_path ?? "").endsWith("out.txt");
      emit({
        event: "can_use_tool",
        tool_name: toolName,
        input,
        tool_use_id: context.toolUseID,
        suggestions: context.suggestions ?? null,
        decision: allow ? "allow" : "deny",
      });
      return allow ? { behavior: "allow", updatedInput: input } : { behavior: "deny", message: "nope-from-sdk" };
    };
    await runQuery(query, "write out.txt and denied.txt", { canUseTool });
  },

  // An in-process MCP server: `echo` answers with what only this process knows (its pid),
  // `explode` throws.
  async sdk_mcp({ query, tool, createSdkMcpServer }) {
    const { z } = await import(pathToFileURL(createRequire(sdkEntry).resolve("zod")).href);
    const echo = tool("echo", "Echoes its text from inside the SDK process", { text: z.string() }, async (args) => {
      emit({ event: "tool_ran", tool: "echo", args, pid: process.pid });
      return { content: [{ type: "text", text: `sdk-echo[${process.pid}]: ${args.text}` }] };
    });
    const explode = tool("explode", "Always raises", { why: z.string() }, async (args) => {
      emit({ event: "tool_ran", tool: "explode", args });
      throw new Error(`exploded: ${args.why}`);
    });
    const calc = createSdkMcpServer({ name: "calc", tools: [echo, explode] });
    await runQuery(query, "use the calc tools", {
      mcpServers: { calc },
      allowedTools: ["mcp__calc__echo", "mcp__calc__explode"],
    });
  },

  async hook_pretooluse({ query }) {
    const denyRead = async (input, toolUseID) => {
      emit({ event: "hook_callback", tool_use_id: toolUseID ?? null, input });
      return {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "blocked-by-sdk-hook",
        },
      };
    };
    await runQuery(query, "read a.txt", { hooks: { PreToolUse: [{ matcher: "Read", hooks: [denyRead] }] } });
  },
};

async function main() {
  const name = process.argv[2];
  if (!Object.hasOwn(scenarios, name)) {
    process.stderr.write(`usage: scenario.mjs {${Object.keys(scenarios).join("|")}}\n`);
    return 2;
  }
  const sdk = await import(pathToFileURL(sdkEntry).href);
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`scenario timed out after ${TIMEOUT_MS / 1000} s`), { name: "Timeout" })), TIMEOUT_MS);
  });
  try {
    await Promise.race([scenarios[name](sdk), timeout]);
    return 0;
  } catch (e) {
    emit({ error: String(e?.message ?? e), error_type: e?.name ?? typeof e });
    if (e?.stack) process.stderr.write(e.stack + "\n");
    abortController.abort(); // ends the CLI process
    return 1;
  } finally {
    clearTimeout(timer);
  }
}

const code = await main();
// Give the SDK a moment to close the CLI, then leave even if something still holds the loop.
setTimeout(() => process.exit(code), 200).unref();
process.exitCode = code;
