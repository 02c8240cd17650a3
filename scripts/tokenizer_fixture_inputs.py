#!/usr/bin/env python3
"""Helper of scripts/make-tokenizer-fixtures.

  tokenizer_fixture_inputs.py CORPUS_DIR DEV_OUT EDGE_OUT   writes the dev lines and the edge cases (JSON lines)
  tokenizer_fixture_inputs.py --compact DEV_IN ORACLE_OUT PREFIX   compacts oracle output into PREFIX.dev.* files

Dev lines: for en-fr, en-de, en-es dev.tsv in that order, each line's English then target side; repeated lines
are kept once, at their first position. tests/tokenizer/tokenizer_parity_test.cpp rebuilds the same list.
"""
import json
import sys


def dev_lines(corpus):
    seen, out = set(), []
    for pair in ("en-fr", "en-de", "en-es"):
        with open(f"{corpus}/{pair}.dev.tsv", encoding="utf-8", newline="\n") as f:
            for line in f.read().split("\n"):
                if not line:
                    continue
                for side in line.split("\t"):
                    if side not in seen:
                        seen.add(side)
                        out.append(side)
    return out


EDGE = [
    "", " ", "   ", "\t", "a\tb", "  leading spaces", "trailing spaces   ", "multiple   spaces   inside",
    "\t\t tabs and spaces \t", "line1\nline2", "\n", "\n\n\n", "a\r\nb", "\r", "two\n\nparagraphs\n",
    "1234567890123456789012345678901234567890", "3.14159 2,718 1e10 -42 +7", "phone 0033-1-23-45-67-89",
    "I'm sure you're right, we've seen they'll do what she'd say, it's", "DON'T I'M YOU'LL", "can’t won’t",
    "👍🏽 family 👨‍👩‍👧‍👦 flags 🇫🇷🇩🇪", "😀😃😄😁", "日本語のテキストです。", "中文文本，测试。", "한국어 텍스트",
    "e\u0301te\u0301 cafe\u0301 (NFD)", "été café (NFC)", "A\u030a vs \u00c5 vs \u212b", "\u1e9b\u0323 q\u0307\u0323",
    "a" * 1000, "supercalifragilisticexpialidocious" * 20, "ab" * 300, "x" + "\u0301" * 50,
    "<s>Hello</s>", "<s> Hello </s> world", "<|im_start|>user\nhi<|im_end|>\n", "<|begin_of_text|>x<|eot_id|>",
    "<start_of_turn>user\nhello<end_of_turn>", "<bos><eos><pad>", "< s> <|im_start", "<|endoftext|><|endoftext|>",
    "text<unk>text", "a\u00a0b", "a\u3000b", "a\u2009b c\u200bd", "\u0085x", "\u1680x", "\u2028\u2029",
    "Hello, world!", "ÀÉÎÕÜ àéîõü ß ẞ", "İstanbul ſ ǅ", "∑∫√∞ ≠ ≤", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया",
    "สวัสดีชาวโลก", "<0x41> <0x0A>", "▁leading metaspace ▁▁", "ĠĠ Ġx", "nul\u0000char", "del\u007f",
    "\ufeffBOM", "\ufffd replacement", "private \ue000", "Mixed CASE and MiXeD", "e-mail: a.b@c.de, http://x.y/z?q=1",
    "  ", " a", "a ", "Hello world, this is a sentence of normal length with punctuation; and more: yes!",
    "'s 's 'S", "don''t", "word...word---word", "tab\tseparated\tvalues", "$100 €50 £20 ¥1000",
    {"hex": "ff"}, {"hex": "c3"}, {"hex": "e282"}, {"hex": "61ff62"}, {"hex": "eda080"}, {"hex": "f4908080"},
    {"hex": "c0af"}, {"hex": "e282ac206f6b"}, {"hex": "f09f9880f09f"}, {"hex": "80808080"},
]


def write_inputs(corpus, dev_out, edge_out):
    with open(dev_out, "w", encoding="utf-8") as f:
        for line in dev_lines(corpus):
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    with open(edge_out, "w", encoding="utf-8") as f:
        for e in EDGE:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")


def compact(dev_in, oracle_out, prefix):
    lines = [json.loads(l) for l in open(dev_in, encoding="utf-8")]
    outs = [json.loads(l) for l in open(oracle_out, encoding="utf-8")]
    assert len(lines) == len(outs), (len(lines), len(outs))
    pre = suf = None
    with open(prefix + ".dev.ids", "w") as ids, open(prefix + ".dev.decoded", "w", encoding="utf-8") as dec:
        for i, (text, o) in enumerate(zip(lines, outs)):
            ids.write(" ".join(map(str, o["ids"])) + "\n")
            if o["decoded"] != text:
                dec.write(f"{i}\t{json.dumps(o['decoded'], ensure_ascii=False)}\n")
            s, n = o["special"], len(o["ids"])
            # special = prefix + ids + suffix, the same prefix and suffix for every line
            k = next(k for k in range(len(s) - n + 1) if s[k:k + n] == o["ids"])
            p, q = s[:k], s[k + n:]
            if pre is None:
                pre, suf = p, q
            assert (p, q) == (pre, suf), f"line {i}: special tokens differ: {p} {q} vs {pre} {suf}"
    with open(prefix + ".special", "w") as f:
        f.write("prefix: " + " ".join(map(str, pre)) + "\n")
        f.write("suffix: " + " ".join(map(str, suf)) + "\n")


def variant(spec_file, name, base_file, out_file):
    """Writes the tokenizer.json of one entry of variants.json (tests/tokenizer/variants_test.cpp applies
    the same changes: "set" replaces top-level fields, "model" replaces model fields, "add_tokens" appends)."""
    spec = next(v for v in json.load(open(spec_file, encoding="utf-8")) if v["name"] == name)
    t = json.load(open(base_file, encoding="utf-8"))
    for k, v in spec.get("set", {}).items():
        t[k] = v
    for k, v in spec.get("model", {}).items():
        t["model"][k] = v
    t["added_tokens"] = t.get("added_tokens", []) + spec.get("add_tokens", [])
    json.dump(t, open(out_file, "w", encoding="utf-8"), ensure_ascii=False)


def variant_inputs(edge_file, corpus, out_file):
    """Inputs of the variant tests: the edge cases and the first 40 en-fr dev pairs (both sides)."""
    with open(out_file, "w", encoding="utf-8") as f:
        for line in open(edge_file, encoding="utf-8"):
            f.write(line)
        for line in dev_lines(corpus)[:80]:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "--variant":
        variant(*sys.argv[2:6])
    elif sys.argv[1] == "--variant-inputs":
        variant_inputs(*sys.argv[2:5])
    elif sys.argv[1] == "--compact":
        compact(*sys.argv[2:5])
    else:
        write_inputs(*sys.argv[1:4])
