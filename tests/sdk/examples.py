"""Runs one of the Python Agent SDK's own example programs, unchanged but for the CLI path,
against a fake model on 127.0.0.1, for tests/sdk_examples.rs.

Usage: <venv python> tests/sdk/examples.py EXAMPLE.py CLI [ARG...]

The example runs in a child Python whose `ClaudeAgentOptions.cli_path` defaults to CLI (a
`sitecustomize` on its path sets it; nothing else of the example changes), with HOME, the
working directory and ANTHROPIC_BASE_URL pointing at fresh, local things, and every proxy at
the fake server, which refuses to tunnel anywhere (so a CLI that tries the network stays
offline). Prints one JSON object: the example's exit code, its stdout and stderr with what
changes between runs (ids, costs, durations, temporary paths) masked, and the models the fake
server was asked for.

The fake model answers every request with one text block naming the last thing the user said,
so both CLIs get the same answer to the same question, and refuses a model alias (`opus`,
`sonnet`, `haiku`, ...) with a 404 `not_found_error`, as the real API does.
"""

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

ALIASES = {"opus", "sonnet", "haiku", "default", "opusplan", "best", "sonnet[1m]", "opus[1m]"}
TIMEOUT_S = float(os.environ.get("EXAMPLE_TIMEOUT", "90"))

SITECUSTOMIZE = '''
import os
_cli = os.environ.get("EXAMPLE_CLI")
if _cli:
    import dataclasses
    import claude_agent_sdk
    _fields = {f.name: f for f in dataclasses.fields(claude_agent_sdk.ClaudeAgentOptions)}
    _fields["cli_path"].default = _cli
    _init = claude_agent_sdk.ClaudeAgentOptions.__init__
    def __init__(self, *a, **kw):
        kw.setdefault("cli_path", _cli)
        _init(self, *a, **kw)
    claude_agent_sdk.ClaudeAgentOptions.__init__ = __init__
'''


def from_schema(schema):
    """A value that fits a JSON schema's shape (its required properties filled)."""
    kind = schema.get("type")
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object" or "properties" in schema:
        return {k: from_schema(v) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [from_schema(schema["items"])] if isinstance(schema.get("items"), dict) else []
    return {"number": 1, "integer": 1, "boolean": True, "string": "x", "null": None}.get(kind, "x")


def smart_answer(body):
    """With FAKE_SMART=1 (the SDK's e2e tests): what a model asked these tests' questions does,
    as blocks: the tool calls the prompt asks for, short exact replies, structured output."""
    tools = {t.get("name"): t for t in body.get("tools", []) if isinstance(t, dict)}
    messages = body.get("messages", [])
    last = messages[-1] if messages else {}
    content = last.get("content") if isinstance(last.get("content"), list) else []
    answered = any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    called = {b.get("name") for m in messages if m.get("role") == "assistant" and isinstance(m.get("content"), list)
              for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
    said = last_user_text(body)
    system = json.dumps(body.get("system", ""))

    def call(name, args):
        return [{"type": "tool_use", "id": "toolu_fake_%d" % len(messages), "name": name, "input": args}]

    if "StructuredOutput" in tools and "StructuredOutput" not in called:
        return call("StructuredOutput", from_schema(tools["StructuredOutput"].get("input_schema", {})))
    if answered:
        return [{"type": "text", "text": "DONE"}]
    m = re.search(r"Use the Agent tool exactly once with subagent_type '([\w-]+)', prompt '([^']+)'", said)
    agent = "Agent" if "Agent" in tools else "Task"
    if m and agent in tools:
        return call(agent, {"subagent_type": m.group(1), "prompt": m.group(2), "description": "greet",
                            "run_in_background": False})
    m = re.search(r"Use the Write tool to create the file (\S+) containing exactly the text (\w+)", said)
    if m and "Write" in tools:
        return call("Write", {"file_path": m.group(1), "content": m.group(2)})
    m = re.search(r"(?:Run(?: this bash command| the command)?): (.+)$", said)
    if m and "Bash" in tools:
        return call("Bash", {"command": m.group(1).strip(), "description": "run it"})
    m = re.search(r"Call the (mcp__\w+) tool", said)
    if m and m.group(1) in tools:
        return call(m.group(1), from_schema(tools[m.group(1)].get("input_schema", {})))
    m = re.search(r"Reply with(?: exactly)?: (.+)$", said)
    if m:
        return [{"type": "text", "text": m.group(1).strip()}]
    m = re.search(r"(\d+)\s*\+\s*(\d+)", said)
    if m:
        return [{"type": "text", "text": str(int(m.group(1)) + int(m.group(2)))}]
    if "short friendly sentence" in system or "greeting" in said:
        return [{"type": "text", "text": "Hi there, nice to meet you!"}]
    return None


def last_user_text(body):
    for message in reversed(body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
                 and not b.get("text", "").startswith("<system-reminder>")]
        if texts:
            return texts[-1]
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return "(tool results)"
    return ""


class Fake(http.server.BaseHTTPRequestHandler):
    models = []
    lock = threading.Lock()

    def log_message(self, *a):
        pass

    def do_CONNECT(self):
        self.send_response(403)
        self.end_headers()

    def do_GET(self):
        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "Not found"}})

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.startswith("/v1/messages") or self.path.startswith("/v1/messages/count_tokens"):
            self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "Not found"}})
            return
        model = body.get("model", "")
        with self.lock:
            self.models.append(model)
        # A model the API does not know (an alias, or the e2e tests' made-up id) is refused.
        if model in ALIASES or not model.startswith("claude-") or "nonexistent" in model:
            self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "model: %s" % model},
                             "request_id": "req_fake_not_found"})
            return
        said = last_user_text(body).strip().splitlines()
        text = "FAKE ANSWER to: %s" % (said[0][:60] if said else "")
        blocks = smart_answer(body) if os.environ.get("FAKE_SMART") == "1" else None
        blocks = blocks or [{"type": "text", "text": text}]
        if os.environ.get("FAKE_SMART") == "1" and (body.get("thinking") or {}).get("type") in ("enabled", "adaptive"):
            blocks = [{"type": "thinking", "thinking": "Let me think.", "signature": "c2lnbmF0dXJl"}] + blocks
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 5}
        events = [
            ("message_start", {"type": "message_start", "message": {
                "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": usage}}),
        ]
        for i, block in enumerate(blocks):
            if block["type"] == "thinking":
                start = {"type": "thinking", "thinking": "", "signature": ""}
                delta = {"type": "thinking_delta", "thinking": block["thinking"]}
                events += [
                    ("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}),
                    ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
                    ("content_block_delta", {"type": "content_block_delta", "index": i,
                                             "delta": {"type": "signature_delta", "signature": block["signature"]}}),
                    ("content_block_stop", {"type": "content_block_stop", "index": i}),
                ]
                continue
            if block["type"] == "text":
                start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
            else:
                start = dict(block, input={})
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                ("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}),
                ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": i}),
            ]
        events += [
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        if not body.get("stream"):
            self._json(200, {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                             "content": blocks, "stop_reason": stop,
                             "stop_sequence": None, "usage": usage})
            return
        payload = "".join("event: %s\ndata: %s\n\n" % (name, json.dumps(data)) for name, data in events).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


MASKS = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"\$\d+\.\d+"), "$<cost>"),
    (re.compile(r"(cost|Cost|duration|Duration|_ms|_usd|USD)([^,\n]*?)\d+(\.\d+)?"), r"\1\2<n>"),
    (re.compile(r"/tmp/[A-Za-z0-9_.-]+"), "<tmp>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
]


def mask(text, work):
    text = text.replace(work, "<work>")
    for pattern, repl in MASKS:
        text = pattern.sub(repl, text)
    return text


def main():
    if sys.argv[1] == "--pytest":
        return run_pytest(sys.argv[2], sys.argv[3], [sys.executable, "-m", "pytest", *sys.argv[4:]])
    if sys.argv[1] == "--cmd":
        return run_pytest(sys.argv[2], sys.argv[3], sys.argv[4:])
    example, cli, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d" % server.server_address[1]
    work = tempfile.mkdtemp(prefix="sdk-example-")
    try:
        home, cwd, site = (os.path.join(work, d) for d in ("home", "cwd", "site"))
        for d in (home, cwd, site):
            os.makedirs(d)
        with open(os.path.join(site, "sitecustomize.py"), "w") as f:
            f.write(SITECUSTOMIZE)
        # The example's own folder holds what it reads beside itself (plugins, agents).
        here = os.path.dirname(os.path.abspath(example))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8", "TERM": "dumb",
            "PYTHONPATH": site, "PYTHONUNBUFFERED": "1", "EXAMPLE_CLI": cli,
            "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-examples",
            "HTTP_PROXY": url, "HTTPS_PROXY": url, "http_proxy": url, "https_proxy": url,
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
            "DISABLE_UPDATES": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_GROWTHBOOK": "1",
            "DISABLE_INSTALLATION_CHECKS": "1", "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1", "DISABLE_COST_WARNINGS": "1",
            "RELOOP_JOURNAL": os.environ.get("EXAMPLE_JOURNAL") or os.path.join(work, "journal.db"),
        }
        try:
            done = subprocess.run([sys.executable, os.path.abspath(example), *args], cwd=cwd, env=env,
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT_S)
            code, out, err = done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode(
                "utf-8", "replace")
        except subprocess.TimeoutExpired as e:
            code, out, err = "timeout", (e.stdout or b"").decode("utf-8", "replace"), (e.stderr or b"").decode(
                "utf-8", "replace")
        print(json.dumps({"example": os.path.basename(example), "args": args, "exit": code,
                          "stdout": mask(out, work), "stderr_tail": mask(err, work)[-3000:],
                          "models": sorted(set(Fake.models)), "here": here}))
    finally:
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)


def run_pytest(root, cli, argv):
    """`argv` (`python -m pytest ...` on a checkout of the SDK's repository for its e2e-tests/,
    or a TypeScript demo) run in `root` against the smart fake; the Python SDK's CLI is `cli`
    (`EXAMPLE_CLI`, which a demo's own CLI-path option reads). Its output is its own. The
    sessions go to the journal `EXAMPLE_JOURNAL` names, kept for `reloop replay`, when it is set
    (tests/sdk_e2e.rs), else to one deleted with the run's temporary folder."""
    os.environ["FAKE_SMART"] = "1"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d" % server.server_address[1]
    work = tempfile.mkdtemp(prefix="sdk-e2e-")
    try:
        home, site = os.path.join(work, "home"), os.path.join(work, "site")
        for d in (home, site):
            os.makedirs(d)
        with open(os.path.join(site, "sitecustomize.py"), "w") as f:
            f.write(SITECUSTOMIZE)
        env = dict(os.environ, HOME=home, PYTHONPATH=site, EXAMPLE_CLI=cli, ANTHROPIC_BASE_URL=url,
                   ANTHROPIC_API_KEY="sk-ant-fake-key-for-e2e", HTTP_PROXY=url, HTTPS_PROXY=url, http_proxy=url,
                   https_proxy=url, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1",
                   DISABLE_ERROR_REPORTING="1", DISABLE_GROWTHBOOK="1",
                   RELOOP_JOURNAL=os.environ.get("EXAMPLE_JOURNAL") or os.path.join(work, "j.db"))
        env.pop("CLAUDE_CONFIG_DIR", None)
        return subprocess.run(argv, cwd=root, env=env).returncode
    finally:
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
