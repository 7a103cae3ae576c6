#!/usr/bin/env python3
"""Record the real Claude Code CLI against a scripted fake Anthropic server (stdlib only).

For each scenario in scenarios.py and each requested Claude Code binary this script:
  - starts a fake Messages API on 127.0.0.1 that answers from the scenario's script and logs every
    request it receives (CONNECTs to anything else are refused and logged too);
  - runs the CLI in print mode (`-p ... --output-format stream-json --verbose`, or stream-json input
    for scenarios that drive stdin) with a fresh HOME, in a fixed project directory;
  - writes the fixture folder: transcript.jsonl (+ subagents/...), stdout.jsonl, requests.jsonl,
    scenario.json, NOTE.md (and hook-inputs.jsonl when a hook ran).

Usage: record.py --out DIR --bin VERSION=PATH [--bin ...] [--only FAMILY[/VARIANT]] [--no-unshare]
The run re-executes itself under `unshare -n` (a network namespace with only loopback) when it can.
"""
import argparse
import hashlib
import http.server
import json
import os
import shutil
import signal
import socketserver
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenarios as S  # noqa: E402

PROJECT = "/tmp/reloop-cc-project"
FULL_TRANSCRIPTS = False
HOME = "/tmp/reloop-cc-home"
HOOKS = "/tmp/reloop-cc-hooks"

SEED_FILES = {
    "src/auth/login.ts": "export interface Credentials {\n  user: string;\n  password: string;\n}\n\n"
    "export function login(c: Credentials): boolean {\n  return c.user === \"admin\" && c.password === \"secret\";\n}\n",
    "src/auth/logout.ts": "export function logout(): void {\n  // TODO: clear the session\n}\n",
    "README.md": "# demo\n\nA tiny project used to record Claude Code transcripts.\n",
}

STOP_HOOK = r"""#!/bin/sh
# usage: stop.sh MODE N   MODE=exit2|json, N=number of blocks or "always"
mode=$1; n=$2; d=/tmp/reloop-cc-hooks
c=$(cat $d/count 2>/dev/null || echo 0); c=$((c+1)); echo $c > $d/count
cat > $d/input-$c.json
if [ "$n" != "always" ] && [ $c -gt $n ]; then exit 0; fi
if [ "$mode" = json ]; then
  printf '{"decision":"block","reason":"JSON-STOP-HOOK-REASON: block %s, also check logout.ts"}\n' $c
  exit 0
fi
echo "STOP-HOOK-FEEDBACK: block $c, you forgot to also check src/auth/logout.ts" >&2
exit 2
"""


def digest(value):
    raw = json.dumps(value, ensure_ascii=False, sort_keys=True).encode()
    return {"sha256": hashlib.sha256(raw).hexdigest(), "len": len(raw)}


def text_of(content):
    if isinstance(content, str):
        return content
    out = []
    for b in content or []:
        if isinstance(b, dict):
            if b.get("type") == "text":
                out.append(b.get("text", ""))
            elif b.get("type") == "tool_result":
                out.append(text_of(b.get("content")))
    return "\n".join(out)


def classify(body):
    msgs = body.get("messages") or []
    users = [m for m in msgs if m.get("role") == "user"]
    if users and "CRITICAL: Respond with TEXT ONLY" in text_of(users[-1].get("content")):
        return "compact"
    if users and "SUBAGENT-TASK" in text_of(users[0].get("content")):
        return "sub"
    if not body.get("tools"):
        return "side"
    return "main"


class Server:
    """The fake Anthropic API: answers each request with the next step of its kind."""

    def __init__(self, scenario):
        self.lock = threading.Lock()
        self.steps = [dict(s) for s in scenario.get("steps", [])]
        self.defaults = scenario.get("defaults", {})
        # `full_texts`: keep every message text whole (the compaction prompt is one of the long ones)
        self.full_texts = bool(scenario.get("full_texts"))
        self.log = []
        self.t0 = time.time()
        self.hanging = threading.Event()
        self.stop = threading.Event()
        self.counts = {}
        self.tool_seq = 0
        self.httpd = None

    def next_step(self, kind):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            for i, s in enumerate(self.steps):
                if s.get("kind", "main") == kind:
                    return self.steps.pop(i), "script"
            if kind in self.defaults:
                return dict(self.defaults[kind]), "default"
            return {"text": "OK (no scripted answer left)"}, "fallback"

    def record(self, entry):
        with self.lock:
            entry["seq"] = len(self.log) + 1
            entry["t"] = round(time.time() - self.t0, 3)
            self.log.append(entry)
            return entry

    def start(self):
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *a):
                pass

            def do_CONNECT(self):
                server.record({"method": "CONNECT", "path": self.path, "answer": 403})
                self.send_response(403)
                self.end_headers()

            def do_GET(self):
                server.record({"method": self.command, "path": self.path, "answer": 404})
                self.send_response(404)
                self.send_header("content-type", "application/json")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(b'{"type":"error","error":{"type":"not_found_error","message":"not found"}}')

            do_HEAD = do_GET

            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                hdrs = {k.lower(): v for k, v in self.headers.items()
                        if k.lower() in ("anthropic-beta", "x-stainless-retry-count", "x-stainless-timeout",
                                         "anthropic-version", "user-agent", "x-app")}
                if not self.path.startswith("/v1/messages") or self.path.startswith("/v1/messages/count_tokens"):
                    server.record({"method": "POST", "path": self.path, "headers": hdrs, "body": body,
                                   "answer": "count" if "count_tokens" in self.path else 404})
                    if "count_tokens" in self.path:
                        self._json(200, {"input_tokens": 1000})
                    else:
                        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not found"}})
                    return
                kind = classify(body)
                step, source = server.next_step(kind)
                logged = dict(body)
                for k in ("system", "tools"):
                    if k in logged:
                        d = digest(logged[k])
                        if k == "tools":
                            d["names"] = [t.get("name") for t in logged[k] if isinstance(t, dict)]
                        logged[k] = d
                logged["messages"] = [m if server.full_texts else shrink_message(m)
                                      for m in logged.get("messages") or []]
                entry = {"method": "POST", "path": self.path, "headers": hdrs, "kind": kind,
                         "step_source": source, "answer": step, "body": logged}
                if server.full_texts:
                    # the messages exactly as sent (number spelling, key order), beside the parsed body
                    entry["messages_raw"] = top_level_raw(raw.decode("utf-8", "replace"), "messages")
                entry = server.record(entry)
                if step.get("delay"):
                    time.sleep(step["delay"])
                if step.get("status"):
                    err = {"type": "error", "error": {"type": step.get("error_type", "api_error"),
                                                      "message": step.get("message", "error")}}
                    self._json(step["status"], err, step.get("headers", {}))
                    return
                msg = server.message(body, step, entry["seq"])
                if body.get("stream"):
                    self._sse(msg, step)
                else:
                    self._json(200, msg)

            def _json(self, status, obj, headers=None):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("request-id", "req_fake_%d" % len(server.log))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, msg, step):
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("request-id", "req_fake_%d" % len(server.log))
                self.end_headers()

                def ev(name, data):
                    self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
                    self.wfile.flush()

                try:
                    start = dict(msg, content=[], stop_reason=None)
                    start["usage"] = dict(msg["usage"], output_tokens=1)
                    ev("message_start", {"type": "message_start", "message": start})
                    if step.get("sse_error") == "start":
                        ev("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
                        return
                    for i, b in enumerate(msg["content"]):
                        raw = step_raw_inputs(step).get(i)
                        if b["type"] == "text":
                            ev("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": {"type": "text", "text": ""}})
                            chunks = [b["text"][j:j + 40] for j in range(0, len(b["text"]), 40)] or [""]
                            for c in chunks:
                                ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                                           "delta": {"type": "text_delta", "text": c}})
                                if step.get("hang") and i == len(msg["content"]) - 1:
                                    server.hanging.set()
                                    end = time.time() + step["hang"]
                                    while time.time() < end and not server.stop.is_set():
                                        time.sleep(0.05)
                                    return
                        elif b["type"] == "thinking":
                            ev("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
                            ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "thinking_delta", "thinking": b["thinking"]}})
                            ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "signature_delta", "signature": b["signature"]}})
                        elif b["type"] == "redacted_thinking":
                            ev("content_block_start", {"type": "content_block_start", "index": i, "content_block": b})
                        elif b["type"] == "tool_use":
                            ev("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": dict(b, input={})})
                            js = raw if raw is not None else json.dumps(b["input"])
                            for j in range(0, len(js), 30):
                                ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                                           "delta": {"type": "input_json_delta", "partial_json": js[j:j + 30]}})
                        ev("content_block_stop", {"type": "content_block_stop", "index": i})
                    if step.get("sse_error"):
                        ev("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
                        return
                    ev("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                                         "usage": {"output_tokens": msg["usage"]["output_tokens"]}})
                    ev("message_stop", {"type": "message_stop"})
                except (BrokenPipeError, ConnectionResetError):
                    server.record({"method": "-", "path": "client closed the stream"})

        class TS(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.httpd = TS(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self.httpd.server_address[1]

    def message(self, body, step, seq):
        blocks = []
        for b in step.get("blocks") or [{"type": "text", "text": step.get("text", "")}]:
            b = dict(b)
            if b["type"] == "tool_use":
                if "id" not in b:
                    with self.lock:
                        self.tool_seq += 1
                        b["id"] = "toolu_%02d_%s" % (self.tool_seq, b["name"].upper())
                b.pop("raw_input", None)
                b.setdefault("input", {})
            blocks.append(b)
        stop = step.get("stop") or ("tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn")
        usage = {"input_tokens": 120, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                 "output_tokens": 25}
        usage.update(step.get("usage", {}))
        return {"id": "msg_fake_%03d" % seq, "type": "message", "role": "assistant",
                "model": step.get("model") or body.get("model", "claude"), "content": blocks, "stop_reason": stop,
                "stop_sequence": None, "usage": usage}


# Transcript lines that only copy what was sent (system prompt, tool schemas, skill listings): their
# long strings and tool definitions are elided unless --full-transcripts, to keep the fixtures small.
BULK_LINES = {"api-request-shape", "api-request-blob", "attachment/prompt_snapshot", "attachment/skill_listing"}


def elided(raw):
    return "<elided by the recorder: %d chars, sha256 %s>" % (len(raw), hashlib.sha256(raw.encode()).hexdigest()[:16])


def slim(value, key=None):
    if isinstance(value, dict):
        return {k: slim(v, k) for k, v in value.items()}
    if isinstance(value, list):
        if key == "tools":
            return [{"name": t.get("name"), "elided": elided(json.dumps(t, ensure_ascii=False))}
                    if isinstance(t, dict) else t for t in value]
        return [slim(v) for v in value]
    if isinstance(value, str) and len(value) > 300:
        return elided(value)
    return value


def slim_transcript(path):
    out = []
    for line in open(path, encoding="utf-8"):
        try:
            d = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        kind = d.get("type", "")
        if kind == "attachment" and isinstance(d.get("attachment"), dict):
            kind += "/" + str(d["attachment"].get("type"))
        if kind in BULK_LINES:
            line = json.dumps(slim(d), ensure_ascii=False, separators=(",", ":")) + "\n"
        out.append(line)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(out)


def shrink_text(t):
    """Texts over 2000 characters (skill and tool listings) are kept as hash, length and head."""
    if isinstance(t, str) and len(t) > 2000:
        return {"sha256": hashlib.sha256(t.encode()).hexdigest(), "len": len(t), "head": t[:300]}
    return t


def shrink_message(m):
    if not isinstance(m, dict):
        return m
    m = dict(m)
    if isinstance(m.get("content"), str):
        m["content"] = shrink_text(m["content"])
    elif isinstance(m.get("content"), list):
        blocks = []
        for b in m["content"]:
            if isinstance(b, dict) and b.get("type") == "text":
                b = dict(b, text=shrink_text(b.get("text")))
            blocks.append(b)
        m["content"] = blocks
    return m


def top_level_raw(text, key):
    """The raw text of one top-level field of a JSON object, or None."""
    dec = json.JSONDecoder()
    i = text.index("{") + 1
    while True:
        while text[i] in " \t\r\n,":
            i += 1
        if text[i] == "}":
            return None
        name, i = dec.raw_decode(text, i)
        while text[i] in " \t\r\n:":
            i += 1
        _, end = dec.raw_decode(text, i)
        if name == key:
            return text[i:end]
        i = end


def step_raw_inputs(step):
    return {i: b["raw_input"] for i, b in enumerate(step.get("blocks") or []) if b.get("raw_input") is not None}


def fresh_dirs():
    # the CLI also keeps per-session task files under /tmp/claude-<uid>/<project dir>/
    scratch = "/tmp/claude-%d/%s" % (os.getuid(), PROJECT.replace("/", "-"))
    shutil.rmtree(scratch, ignore_errors=True)
    for d in (PROJECT, HOME, HOOKS):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    for rel, text in SEED_FILES.items():
        p = os.path.join(PROJECT, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    with open(os.path.join(HOOKS, "stop.sh"), "w") as f:
        f.write(STOP_HOOK)
    os.chmod(os.path.join(HOOKS, "stop.sh"), 0o755)


def seed_files(files):
    """A scenario's extra files (absolute paths: settings in the project or HOME, commands, hook
    scripts); a `.sh` file is made executable."""
    for path, text in files.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        if path.endswith(".sh"):
            os.chmod(path, 0o755)


def seed_git(paths):
    """A scenario's `git`: the project made a git repository whose first commit holds `commit`
    and whose index also holds `stage` (paths relative to the project), with a fixed author and
    date; the rest of the project stays untracked."""
    if not paths:
        return
    env = dict(os.environ, GIT_AUTHOR_NAME="rec", GIT_AUTHOR_EMAIL="rec@example.invalid",
               GIT_COMMITTER_NAME="rec", GIT_COMMITTER_EMAIL="rec@example.invalid",
               GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    git = ["git", "-C", PROJECT, "-c", "init.defaultBranch=main"]
    subprocess.run(git + ["init", "-q"], check=True, env=env)
    if paths.get("commit"):
        subprocess.run(git + ["add", "--"] + paths["commit"], check=True, env=env)
        subprocess.run(git + ["commit", "-q", "-m", "seed"], check=True, env=env)
    if paths.get("stage"):
        subprocess.run(git + ["add", "--"] + paths["stage"], check=True, env=env)


def base_env(port):
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": HOME,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % port,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-recording",
        "HTTP_PROXY": "http://127.0.0.1:%d" % port,
        "HTTPS_PROXY": "http://127.0.0.1:%d" % port,
        "NO_PROXY": "127.0.0.1,localhost",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_UPDATES": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_GROWTHBOOK": "1",
        "DISABLE_INSTALLATION_CHECKS": "1",
        "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
        "DISABLE_COST_WARNINGS": "1",
    }
    return env


class Driver:
    """Feeds stream-json input to the CLI, waiting on the server or on stdout as the scenario says."""

    def __init__(self, proc, server, actions, out_lines):
        self.proc, self.server, self.actions, self.out = proc, server, actions, out_lines

    def wait(self, pred, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            if pred():
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.05)
        return False

    def run(self):
        for a in self.actions:
            if "send" in a:
                try:
                    self.proc.stdin.write((json.dumps(a["send"]) + "\n").encode())
                    self.proc.stdin.flush()
                except BrokenPipeError:
                    return
            elif "sleep" in a:
                time.sleep(a["sleep"])
            elif a.get("wait") == "hang":
                self.wait(self.server.hanging.is_set)
            elif a.get("wait") == "requests":
                self.wait(lambda: self.server.counts.get(a.get("kind", "main"), 0) >= a["n"])
            elif a.get("wait") == "stdout":
                self.wait(lambda: sum(a["contains"] in l for _, l in list(self.out)) >= a.get("n", 1))
            elif a.get("wait") == "idle":
                def idle():
                    return self.out and time.time() - self.out[-1][0] >= a["secs"] and \
                        any('"type":"result"' in l for _, l in self.out)
                self.wait(idle, 120)
            elif "close" in a:
                try:
                    self.proc.stdin.close()
                except BrokenPipeError:
                    pass
            elif "signal" in a:
                self.proc.send_signal(getattr(signal, a["signal"]))


def find_session_files(session):
    root = os.path.join(HOME, ".claude", "projects")
    found = []
    for dp, _, fns in os.walk(root):
        for fn in fns:
            found.append(os.path.join(dp, fn))
    main = [p for p in found if os.path.basename(p) == session + ".jsonl"]
    return root, found, main


def record(scenario, version, binary, out_root):
    name = scenario["name"]
    fresh_dirs()
    seed_files(scenario.get("files", {}))
    # A scenario's modification times (seconds since the epoch, by the project's relative path):
    # the recorder writes every file within a millisecond or so, and some rules order by them.
    for rel, when in scenario.get("mtimes", {}).items():
        os.utime(os.path.join(PROJECT, rel), (when, when))
    seed_git(scenario.get("git"))
    srv = Server(scenario)
    port = srv.start()
    env = base_env(port)
    env.update(scenario.get("env", {}))
    args = [binary]
    stdin_mode = scenario.get("input")
    if stdin_mode is None:
        args += ["-p", scenario["prompt"]]
    else:
        args += ["-p"]
    args += ["--output-format", "stream-json", "--verbose"]
    if stdin_mode is not None:
        args += ["--input-format", "stream-json"]
    if scenario.get("settings"):
        with open(os.path.join(HOME, "settings-under-test.json"), "w") as f:
            json.dump(scenario["settings"], f, indent=1)
        args += ["--settings", os.path.join(HOME, "settings-under-test.json")]
    args += scenario.get("flags", [])
    out_lines = []
    t0 = time.time()
    proc = subprocess.Popen(args, cwd=PROJECT, env=env, stdin=subprocess.PIPE if stdin_mode is not None
                            else subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def reader():
        for line in proc.stdout:
            out_lines.append((time.time(), line.decode("utf-8", "replace").rstrip("\n")))
    rt = threading.Thread(target=reader, daemon=True)
    rt.start()
    err_chunks = []
    et = threading.Thread(target=lambda: err_chunks.append(proc.stderr.read()), daemon=True)
    et.start()
    actions = stdin_mode if stdin_mode is not None else scenario.get("actions")
    if actions:
        threading.Thread(target=Driver(proc, srv, actions, out_lines).run, daemon=True).start()
    try:
        rc = proc.wait(timeout=scenario.get("timeout", 150))
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = "timeout"
    srv.stop.set()
    rt.join(5)
    et.join(5)
    duration = round(time.time() - t0, 1)
    srv.httpd.shutdown()

    dest = os.path.join(out_root, version, name)
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    with open(os.path.join(dest, "stdout.jsonl"), "w") as f:
        for _, l in out_lines:
            f.write(l + "\n")
    with open(os.path.join(dest, "requests.jsonl"), "w") as f:
        for e in srv.log:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    session = None
    for _, l in out_lines:
        try:
            d = json.loads(l)
        except ValueError:
            continue
        # `--output-format json --verbose` prints every message as one array.
        if isinstance(d, list):
            d = next((m for m in d if isinstance(m, dict) and m.get("session_id")), {})
        if not isinstance(d, dict):
            continue
        if d.get("session_id") and d.get("session_id") != "default":
            session = d["session_id"]
            break
    root, found, main = find_session_files(session or "-")
    copied = []
    for p in found:
        rel = os.path.relpath(p, root)
        parts = rel.split(os.sep)[1:]  # drop the project dir name
        if main and p == main[0]:
            target = "transcript.jsonl"
        elif session and parts and parts[0] == session:
            target = os.path.join(*parts[1:])  # <session>/subagents/... -> subagents/...
        else:
            target = os.path.join("other", *parts)
        os.makedirs(os.path.dirname(os.path.join(dest, target)) or dest, exist_ok=True)
        shutil.copy(p, os.path.join(dest, target))
        if target.endswith(".jsonl") and not FULL_TRANSCRIPTS:
            slim_transcript(os.path.join(dest, target))
        copied.append({"from": p, "to": target})
    hook_inputs = sorted((int(f[6:-5]), f) for f in os.listdir(HOOKS) if f.startswith("input-"))
    if hook_inputs:
        with open(os.path.join(dest, "hook-inputs.jsonl"), "w") as f:
            for _, fn in hook_inputs:
                with open(os.path.join(HOOKS, fn)) as h:
                    txt = h.read().strip()
                f.write((txt if txt else "{}") + "\n")
    stderr = b"".join(c for c in err_chunks if c).decode("utf-8", "replace")
    scen = {k: v for k, v in scenario.items() if k not in ("note",)}
    scen["claude_code_version"] = version
    scen["argv"] = [os.path.basename(binary)] + args[1:]
    scen["cwd"] = PROJECT
    scen["env_extra"] = scenario.get("env", {})
    scen["env_base"] = {k: (v.replace(str(port), "PORT")) for k, v in base_env(port).items()}
    scen["outcome"] = {"exit_code": rc, "wall_seconds": duration, "stderr": stderr[-4000:],
                       "requests": len(srv.log), "files": copied, "session_id": session}
    with open(os.path.join(dest, "scenario.json"), "w") as f:
        json.dump(scen, f, indent=1, ensure_ascii=False)
    write_note(dest, scenario, version, scen, out_lines, srv)
    print("%s/%s: exit %s, %d requests, %d stdout lines, %ss, files %s" % (
        version, name, rc, len(srv.log), len(out_lines), duration, [c["to"] for c in copied]), flush=True)


def summarize_transcript(path):
    rows = []
    if not os.path.exists(path):
        return ["(no transcript written)"]
    for l in open(path):
        try:
            d = json.loads(l)
        except ValueError:
            rows.append("(unparsable line)")
            continue
        t = d.get("type")
        extra = []
        if d.get("subtype"):
            extra.append("subtype=" + str(d["subtype"]))
        if d.get("isMeta"):
            extra.append("isMeta")
        if d.get("isSidechain"):
            extra.append("sidechain")
        if d.get("isApiErrorMessage"):
            extra.append("isApiErrorMessage")
        if t == "attachment":
            extra.append("attachment.type=" + str((d.get("attachment") or {}).get("type")))
        m = d.get("message")
        if isinstance(m, dict):
            c = m.get("content")
            if isinstance(c, str):
                extra.append("text %r" % c[:90])
            elif isinstance(c, list):
                kinds = []
                for b in c:
                    if isinstance(b, dict):
                        k = b.get("type")
                        if k == "text":
                            k += " %r" % b.get("text", "")[:90]
                        elif k == "tool_use":
                            k += " " + str(b.get("name"))
                        elif k == "tool_result":
                            k += (" is_error" if b.get("is_error") else "") + " %r" % text_of([b])[:90]
                        kinds.append(k)
                extra.append("[" + ", ".join(kinds) + "]")
            if m.get("stop_reason"):
                extra.append("stop_reason=" + str(m["stop_reason"]))
        if d.get("content") and t == "system":
            extra.append("content %r" % str(d["content"])[:90])
        rows.append("%s %s" % (t, " ".join(extra)))
    return rows


def write_note(dest, scenario, version, scen, out_lines, srv):
    lines = ["# %s — Claude Code %s" % (scenario["name"], version), ""]
    lines.append(scenario.get("note", "").strip())
    lines += ["", "## How it was made", "",
              "Recorded by `scripts/record-claude-code/record.py` (scenario `%s` in `scenarios.py`): the real "
              "Claude Code %s CLI, offline (network namespace with loopback only, proxies at the fake server), "
              "fresh HOME `%s`, project `%s`, against the fake Anthropic server whose script is in `scenario.json`."
              % (scenario["name"], version, HOME, PROJECT),
              "`requests.jsonl` holds every request the server received; `system` and `tools` bodies are "
              "replaced by their sha256 and length (tools also list their names), and message texts over 2000 "
              "characters by their sha256, length and first 300 characters, to keep the size down.",
              "" if FULL_TRANSCRIPTS else "In `transcript.jsonl` (and subagent transcripts) the lines that only copy "
              "what was sent (`api-request-shape`, `api-request-blob`, `prompt_snapshot` and `skill_listing` "
              "attachments) keep their keys, but strings over 300 characters read `<elided by the recorder: N "
              "chars, sha256 X>` and their `tools` lists hold only each tool's name; every other line is "
              "verbatim.",
              "", "Exit code: `%s`; %d requests; %d stdout lines; %ss." % (
                  scen["outcome"]["exit_code"], len(srv.log), len(out_lines), scen["outcome"]["wall_seconds"]),
              "", "## Transcript lines (generated summary)", "", "```"]
    lines += summarize_transcript(os.path.join(dest, "transcript.jsonl"))
    lines += ["```", ""]
    with open(os.path.join(dest, "NOTE.md"), "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--bin", action="append", required=True, help="VERSION=PATH")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--no-unshare", action="store_true")
    ap.add_argument("--full-transcripts", action="store_true", help="do not elide bulk transcript lines")
    a = ap.parse_args()
    global FULL_TRANSCRIPTS
    FULL_TRANSCRIPTS = a.full_transcripts
    if not a.no_unshare and os.environ.get("RELOOP_CC_NETNS") != "1" and shutil.which("unshare"):
        cmd = "ip link set lo up && exec \"$0\" \"$@\""
        flag = [] if os.geteuid() == 0 else ["-r"]
        os.execvpe("unshare", ["unshare", *flag, "-n", "sh", "-c", cmd, sys.executable, *sys.argv],
                   dict(os.environ, RELOOP_CC_NETNS="1"))
    for spec in a.bin:
        version, path = spec.split("=", 1)
        for sc in S.SCENARIOS:
            if a.only and not any(sc["name"] == o or sc["name"].startswith(o + "/") for o in a.only):
                continue
            if version in sc.get("skip_versions", []):
                print("%s/%s: skipped (%s)" % (version, sc["name"], sc.get("skip_reason", "")), flush=True)
                continue
            record(S.for_version(sc, version), version, os.path.abspath(path), os.path.abspath(a.out))


if __name__ == "__main__":
    main()
