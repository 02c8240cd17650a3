#!/usr/bin/env node
// Oracle side of scripts/bench-tokenizer: the Rust `tokenizers` library via its Node binding encodes
// every line (every column of a .tsv) of a text file; prints tokens/s for per-line encode() calls and for
// one encodeBatch() call (run with RAYON_NUM_THREADS=1 for a single-threaded figure), by wall-clock time
// and by the CPU time of the whole process (all threads).
//   NODE_PATH=<dir>/node_modules node bench_tokenizer_oracle.js TOKENIZER_JSON TEXT_FILE
const { Tokenizer } = require("@anush008/tokenizers");
const fs = require("fs");
const [file, textFile] = process.argv.slice(2);
let t0 = process.hrtime.bigint();
const tok = Tokenizer.fromFile(file);
const loadS = Number(process.hrtime.bigint() - t0) / 1e9;
let lines = fs.readFileSync(textFile, "utf8").split("\n");
if (lines.length && lines[lines.length - 1] === "") lines.pop();
if (textFile.endsWith(".tsv")) lines = lines.flatMap((l) => l.split("\t"));
(async () => {
  t0 = process.hrtime.bigint();
  let c0 = process.cpuUsage();
  let tokens = 0;
  for (const l of lines) tokens += (await tok.encode(l, null, { addSpecialTokens: false })).getIds().length;
  const perLine = Number(process.hrtime.bigint() - t0) / 1e9;
  let c = process.cpuUsage(c0);
  const perLineCpu = (c.user + c.system) / 1e6;
  t0 = process.hrtime.bigint();
  c0 = process.cpuUsage();
  const encs = await tok.encodeBatch(lines, { addSpecialTokens: false });
  const batch = Number(process.hrtime.bigint() - t0) / 1e9;
  c = process.cpuUsage(c0);
  const batchCpu = (c.user + c.system) / 1e6;
  let btokens = 0;
  for (const e of encs) btokens += e.getIds().length;
  console.log(JSON.stringify({ lines: lines.length, tokens, per_line_s: perLine, per_line_tokens_per_s: tokens / perLine,
                               per_line_cpu_s: perLineCpu, per_line_tokens_per_cpu_s: tokens / perLineCpu,
                               batch_tokens: btokens, batch_s: batch, batch_tokens_per_s: btokens / batch,
                               batch_cpu_s: batchCpu, batch_tokens_per_cpu_s: btokens / batchCpu, load_s: loadS }));
})();
