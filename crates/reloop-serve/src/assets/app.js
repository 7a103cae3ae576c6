"use strict";
// A running session's page follows it: each step the server reports (server-sent events)
// re-reads the facts and reloads the timeline; the end closes the stream.
(function () {
  const root = document.getElementById("session");
  if (!root || root.dataset.live !== "on") return;
  const id = root.dataset.id;
  const live = document.getElementById("live");
  const source = new EventSource("/s/" + encodeURIComponent(id) + "/events");
  let busy = false, again = false;
  async function refresh(last, ended) {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const r = await fetch("/s/" + encodeURIComponent(id) + "/facts", { cache: "no-store" });
      if (r.ok) {
        document.getElementById("facts").innerHTML = await r.text();
        root.dataset.steps = r.headers.get("x-reloop-steps") || last;
        const frame = document.getElementById("timeline");
        if (frame) frame.src = frame.src;
      }
      if (ended) { root.dataset.live = "ended"; live.textContent = "ended after step " + last; }
      else live.textContent = "following: step " + last;
    } finally {
      busy = false;
      if (again) { again = false; refresh(root.dataset.steps, root.dataset.live === "ended"); }
    }
  }
  source.addEventListener("step", (e) => { if (String(e.data) !== root.dataset.steps) refresh(e.data, false); });
  source.addEventListener("end", (e) => { source.close(); refresh(e.data, true); });
  source.addEventListener("error", () => { if (source.readyState === EventSource.CLOSED) live.textContent = "stopped following"; });
})();
