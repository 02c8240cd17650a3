#!/usr/bin/env node
// Tokenizer oracle for scripts/make-tokenizer-fixtures: the Hugging Face `tokenizers` library (Rust, via
// the npm package @anush008/tokenizers@0.6.0, which wraps tokenizers 0.22) encodes and decodes each
// input line. Input lines are JSON: a string, or {"hex": "..."} for raw bytes (decoded to text with
// U+FFFD for invalid UTF-8, as Node's UTF-8 decoder and ../shared/tools/hf-tokenize.js do).
// Output, one JSON object per line: {"ids", "special", "decoded", "special_decoded"}.
//   NODE_PATH=<dir>/node_modules node tokenizer_oracle.js TOKENIZER_JSON < in.jsonl > out.jsonl
const { Tokenizer } = require("@anush008/tokenizers");
const fs = require("fs");
const tok = Tokenizer.fromFile(process.argv[2]);
const lines = fs.readFileSync(0, "utf8").split("\n").filter((l) => l.length > 0);
(async () => {
  const out = [];
  for (const line of lines) {
    const v = JSON.parse(line);
    const text = typeof v === "string" ? v : Buffer.from(v.hex, "hex").toString("utf8");
    const plain = (await tok.encode(text, null, { addSpecialTokens: false })).getIds();
    const special = (await tok.encode(text, null, { addSpecialTokens: true })).getIds();
    out.push(JSON.stringify({
      ids: Array.from(plain),
      special: Array.from(special),
      decoded: await tok.decode(Array.from(plain), false),
      special_decoded: await tok.decode(Array.from(special), false),
    }));
  }
  process.stdout.write(out.join("\n") + "\n");
})();
