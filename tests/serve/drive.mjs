// Drives `reloop serve` in Debian's headless chromium (tests/serve.rs starts the server and a
// live session, then runs this): follow the live session to its end, filter, search, open a
// session and read the model's text, diff two sessions. Every page must log no console error.
// Prints one JSON line of what it saw; any failed expectation throws (exit 1) with its reason.
//
//   node drive.mjs '{"base": "http://127.0.0.1:PORT", "live": ID, "seed": ID, "fork": ID,
//                    "search": WORD, "text": MODEL_TEXT, "answer": LIVE_ANSWER, "shots": DIR}'
import { chromium } from "playwright-core";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const want = JSON.parse(process.argv[2]);
const profile = mkdtempSync(join(tmpdir(), "reloop-serve-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1400, height: 1000 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const faults = [];
const seen = {};
function expect(ok, what) {
  if (!ok) throw new Error("expected: " + what);
}
try {
  const page = await context.newPage();
  page.setDefaultTimeout(30000);
  page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") faults.push(m.type() + ": " + m.text()); });
  page.on("pageerror", (e) => faults.push("pageerror: " + e.message));
  page.on("requestfailed", (r) => { if (!r.url().endsWith("/events")) faults.push("request failed: " + r.url()); });

  // 1. A running session: its page follows it to its end, the model's last answer appearing.
  await page.goto(want.base + "/s/" + want.live);
  seen.live_state_at_open = await page.getAttribute("#session", "data-live");
  expect(seen.live_state_at_open === "on", "the live session's page follows it (data-live=on)");
  await page.waitForSelector('#session[data-live="ended"]', { timeout: 60000 });
  await page.waitForFunction((a) => document.getElementById("final-answer").textContent.includes(a), want.answer);
  seen.live_final = await page.textContent("#final-answer");
  seen.live_state = await page.textContent("#state");
  await page.frameLocator("#timeline").locator('#status[data-state="ok"]').waitFor();
  await page.screenshot({ path: join(want.shots, "live.png"), fullPage: false });

  // 2. The list, filtered through its form: forks only; the URL carries the filter.
  await page.goto(want.base + "/");
  seen.all = Number(await page.getAttribute("#count", "data-total"));
  await page.screenshot({ path: join(want.shots, "list.png"), fullPage: false });
  await page.selectOption("#f-source", "fork");
  await Promise.all([page.waitForURL(/source=fork/), page.click("#apply")]);
  seen.forks = await page.$$eval("#sessions tbody tr", (rows) => rows.map((r) => r.dataset.id));
  expect(seen.forks.includes(want.fork) && !seen.forks.includes(want.seed), "the fork filter lists the fork, not its parent");
  seen.fork_url = page.url();

  // 3. Full-text search, from the same form: a word of a tool result.
  await page.goto(want.base + "/");
  await page.fill("#f-q", want.search);
  await Promise.all([page.waitForURL(/q=/), page.click("#apply")]);
  seen.found = await page.$$eval("#sessions tbody tr", (rows) => rows.map((r) => r.dataset.id));
  seen.marks = await page.$$eval("#sessions mark", (m) => m.map((x) => x.textContent));
  expect(seen.found.includes(want.seed), "the search finds the seed session");
  expect(seen.marks.length > 0, "the search marks where it matched");
  await page.screenshot({ path: join(want.shots, "search.png"), fullPage: false });

  // 4. A session's page, opened from the list: the model's text, its models, its why, its tree.
  await Promise.all([page.waitForURL(/\/s\//), page.click(`tr[data-id="${want.seed}"] a`)]);
  seen.model_text = await page.textContent("#model-text");
  expect(seen.model_text.includes(want.text), "the model's text shows");
  seen.requested = await page.textContent("#requested-model");
  seen.answering = await page.textContent("#answering-model");
  seen.why = await page.textContent("#why");
  seen.tree = await page.$$eval("#tree a", (a) => a.map((x) => x.textContent));
  expect(seen.why.includes("completed"), "why says how it ended");
  const frame = page.frameLocator("#timeline");
  await frame.locator('#status[data-state="ok"]').waitFor();
  seen.timeline_requests = await frame.locator(".item.request").count();
  await page.screenshot({ path: join(want.shots, "session.png"), fullPage: false });

  // 5. A diff of two sessions, asked through its form; the link carries both.
  await page.goto(want.base + "/diff");
  await page.fill("#f-a", want.seed);
  await page.fill("#f-b", want.fork);
  await Promise.all([page.waitForURL(/a=.*b=/), page.click("#compare")]);
  seen.verdict = await page.textContent("#verdict");
  seen.diff = await page.textContent("#diff");
  seen.diff_url = page.url();
  await page.screenshot({ path: join(want.shots, "diff.png"), fullPage: false });
} finally {
  await context.close();
}
seen.faults = faults;
console.log(JSON.stringify(seen));
