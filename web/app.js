// gpstream demo: one WebSocket stream per run (protocol: docs/server.md). Source words are sent at
// the chosen pace (or as the user types); every "word" event is shown with its delay (source words
// read) and lag (ms from the arrival of the last source word it read to its emission). With the
// local-agreement policy, "tentative" events' words (proposed, not written yet) follow the translation, greyed.
"use strict";

// In the shipped model's domain (software documentation), like scripts/demo's sentences.
const EXAMPLE =
  "Click the button to save the document. " +
  "The file is saved in your home folder. " +
  "You can change the settings in the preferences dialog. " +
  "Select the text and press the delete key.";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
let ws = null, timer = null, sourceWords = [], lags = [], started = 0, targetCount = 0;

// API keys: a server started with --api-key-file says so in /health ("auth": "api_key"). The page then asks
// for a key once, keeps it in localStorage, and sends it as ?key= on the WebSocket URL (the browser's
// WebSocket API cannot set headers) and as "Authorization: Bearer" on fetches.
const KEY_STORAGE = "gpstream-api-key";
let authRequired = false;

const storedKey = () => localStorage.getItem(KEY_STORAGE) || "";
const bearer = (key) => (key ? { Authorization: `Bearer ${key}` } : {});

// The stored key; when the server needs one and none is stored, asks for it.
function apiKey() {
  let key = storedKey();
  if (!key && authRequired) {
    key = (window.prompt("This server needs an API key:") || "").trim();
    if (key) localStorage.setItem(KEY_STORAGE, key);
  }
  return key;
}

// A stream refused before it opened: a wrong key (forgotten, so the next run asks again) or the server's
// limits. /metrics needs a key too, so its status tells them apart.
function explainRefusal() {
  if (!authRequired) { setStatus("the server refused the stream (too many streams open?)", true); return; }
  const key = storedKey();
  if (!key) { setStatus("this server needs an API key: start again to enter it", true); return; }
  fetch("/metrics", { headers: bearer(key) }).then((r) => {
    if (r.status === 401) {
      localStorage.removeItem(KEY_STORAGE);
      setStatus("the API key was refused: the next run asks for it again", true);
    } else {
      setStatus("the server refused the stream (too many streams open from this key?)", true);
    }
  }).catch(() => setStatus("connection error", true));
}

function setStatus(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "muted error" : "muted";
}

function showStats() {
  if (!lags.length) { $("stats").textContent = "—"; return; }
  const sorted = [...lags].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  const mean = lags.reduce((a, b) => a + b, 0) / lags.length;
  $("stats").textContent = `${targetCount} target words · lag mean ${mean.toFixed(0)} ms · p50 ${q(0.5).toFixed(0)} ms · ` +
    `p99 ${q(0.99).toFixed(0)} ms (lag: from the arrival of the last source word a target word needed to its emission)`;
}

function addSourceWord(w) {
  const span = document.createElement("span");
  span.className = "sword";
  span.textContent = w;
  $("source").appendChild(span);
  sourceWords.push(span);
}

// The greyed tentative words, kept after the translation's last word.
function tentativeBox() {
  let box = $("tentative");
  if (!box) {
    box = document.createElement("span");
    box.id = "tentative";
    box.className = "tentative";
  }
  $("translation").appendChild(box);  // (re)placed last
  return box;
}

// body[data-tentative-shown]: how many tentative words have been shown in all (scripts/test-browser reads it).
function setTentative(words) {
  const box = tentativeBox();
  box.textContent = "";
  for (const w of words) {
    const span = document.createElement("span");
    span.className = "tword";
    span.textContent = w;
    box.appendChild(span);
  }
  const shown = parseInt(document.body.dataset.tentativeShown || "0", 10) + words.length;
  document.body.dataset.tentativeShown = String(shown);
}

function onEvent(ev) {
  if (ev.type === "tentative") {
    setTentative(ev.words);
    return;
  }
  if (ev.type === "ready") {
    const lag = ev.policy && ev.policy.name !== "wait-k" ? ev.policy.name : `k=${ev.k}`;
    setStatus(`streaming · ${lag} · ${ev.paradigm} · φ=${ev.phi}`);
    $("src-lang").textContent = ev.source_lang;
    $("tgt-lang").textContent = ev.target_lang;
  } else if (ev.type === "word") {
    const span = document.createElement("span");
    span.className = "tword" + (ev.lag_ms > 1000 ? " slow" : "");
    span.textContent = ev.word;
    const sub = document.createElement("sub");
    sub.textContent = `${ev.delay}·${Math.round(ev.lag_ms)}ms`;
    sub.title = `written after reading ${ev.delay} source words of this sentence; lag ${ev.lag_ms} ms`;
    span.appendChild(sub);
    const box = $("tentative");
    $("translation").insertBefore(span, box);
    // A written word that was the first tentative one leaves the tentative words; any other makes them stale.
    if (box) {
      const first = box.firstChild;
      if (first && first.textContent === ev.word) box.removeChild(first);
      else box.textContent = "";
    }
    targetCount++;
    lags.push(ev.lag_ms);
    showStats();
  } else if (ev.type === "segment_end") {
    if ($("tentative")) $("tentative").remove();
    const br = document.createElement("span");
    br.className = "segment-end";
    br.textContent = "¶";
    $("translation").appendChild(br);
  } else if (ev.type === "finished") {
    if ($("tentative")) $("tentative").remove();
    setStatus(`finished in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    document.body.dataset.done = "1";
  } else if (ev.type === "error") {
    setStatus(`error: ${ev.code}: ${ev.message}`, true);
    document.body.dataset.done = "1";
  }
}

function open(onReady) {
  stop();
  $("source").textContent = "";
  $("translation").textContent = "";
  sourceWords = []; lags = []; targetCount = 0;
  delete document.body.dataset.done;
  showStats();
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const key = apiKey();
  const query = key ? `?key=${encodeURIComponent(key)}` : "";
  ws = new WebSocket(`${proto}//${location.host}/v1/stream${query}`);
  let opened = false;
  ws.onopen = () => {
    opened = true;
    const start = { type: "start" };
    const k = parseInt($("k").value, 10);
    if (k > 0) start.k = k;
    const policy = $("policy").value;
    if (policy) start.policy = { name: policy };
    ws.send(JSON.stringify(start));
    started = performance.now();
    onReady();
  };
  ws.onmessage = (m) => onEvent(JSON.parse(m.data));
  ws.onclose = (e) => {
    $("stop").disabled = true;
    if (!opened) explainRefusal();
    else if (e.code !== 1000 && e.code !== 1005) setStatus(`closed (${e.code} ${e.reason})`, true);
  };
  ws.onerror = () => { if (opened) setStatus("connection error", true); };
  $("stop").disabled = false;
}

function sendSource(text) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "source", text }));
}

function endSource() {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "end" }));
}

// Sends the words of `text` one at a time at the chosen pace, then the end of the source.
function play(text) {
  const words = text.split(/\s+/).filter((w) => w.length);
  const pace = Math.max(0.5, parseFloat($("pace").value) || 2.5);
  open(() => {
    let i = 0;
    const next = () => {
      if (i >= words.length) { endSource(); timer = null; return; }
      addSourceWord(words[i]);
      sendSource(words[i] + " ");
      i++;
      timer = setTimeout(next, 1000 / pace);
    };
    next();
  });
}

function stop() {
  if (timer) { clearTimeout(timer); timer = null; }
  if (ws) { ws.onclose = null; ws.close(); ws = null; }
  $("stop").disabled = true;
}

// Live typing: what is appended to the box is sent as it is typed (the server holds back a word
// until whitespace follows it); Enter ends the stream.
let liveSent = "";
$("live").addEventListener("focus", () => {
  if (!ws || ws.readyState > WebSocket.OPEN || document.body.dataset.done) {
    liveSent = "";
    $("live").value = "";
    open(() => {});
  }
});
$("live").addEventListener("input", () => {
  const v = $("live").value;
  if (!v.startsWith(liveSent)) { setStatus("only appending is streamed: edits are not sent", true); return; }
  const added = v.slice(liveSent.length);
  liveSent = v;
  if (!added) return;
  sendSource(added);
  const done = v.split(/\s+/);
  if (/\s$/.test(v)) while (sourceWords.length < done.filter((w) => w).length) addSourceWord(done.filter((w) => w)[sourceWords.length]);
});
$("live").addEventListener("keydown", (e) => {
  if (e.key !== "Enter") return;
  const words = liveSent.split(/\s+/).filter((w) => w);
  while (sourceWords.length < words.length) addSourceWord(words[sourceWords.length]);
  endSource();
  liveSent = "";
  $("live").value = "";
});

$("play").onclick = () => { $("text").value = EXAMPLE; play(EXAMPLE); };
$("send").onclick = () => play($("text").value);
$("stop").onclick = () => { endSource(); if (timer) { clearTimeout(timer); timer = null; } };

fetch("/health").then((r) => r.json()).then((h) => {
  authRequired = h.auth === "api_key";
  $("model").textContent = `${h.source_lang} → ${h.target_lang} · ${h.paradigm} · k=${h.k} · φ=${h.phi} · ` +
    `${h.sessions}/${h.max_sessions} streams open`;
}).catch(() => { $("model").textContent = "server unreachable"; });

if (params.get("pace")) $("pace").value = params.get("pace");
if (params.get("k")) $("k").value = params.get("k");
if (params.get("policy")) $("policy").value = params.get("policy");
// Headless Chromium's --virtual-time-budget fast-forwards timers but pauses while a fetch is pending:
// during an autoplayed run keep one small request in flight, so the page's clock follows the server's.
async function holdWhileStreaming() {
  const body = JSON.stringify({ text: "hold" });
  const headers = { "Content-Type": "application/json", ...bearer(apiKey()) };
  while (!document.body.dataset.done) {
    try {
      await fetch("/v1/translate", { method: "POST", headers, body });
    } catch (e) {
      return;
    }
  }
}

if (params.get("autoplay")) {
  $("text").value = EXAMPLE;
  play(EXAMPLE);
  if (params.get("hold")) holdWhileStreaming();
}
