#!/usr/bin/python3
"""Regenerates tests/eval/data/tokenizer_golden.jsonl: sacreBLEU's 13a, intl and char tokenizers and
Python's str.lower()/split() applied to seeded random strings that mix ASCII punctuation, digits,
Unicode punctuation/symbols/numbers of many scripts, CJK, combining marks and Unicode whitespace.

The tokenizers are re-stated here from sacreBLEU 2.6.0's definitions (metrics.md B.1) with Python's
`re` (13a) and the `regex` module (intl, \\p{P} \\p{S} \\p{N}), i.e. the same engines sacreBLEU uses,
so the file is an independent oracle for src/eval/tokenizer_*.cpp.
Needs Debian's python3-regex (2022.10.31: Unicode 15.0, as libutf8proc 2.8.0).
Usage: /usr/bin/python3 scripts/gen_eval_tokenizer_golden.py > tests/eval/data/tokenizer_golden.jsonl
"""
import json
import random
import re

import regex

RE_13A = [
    (re.compile(r'([\{-\~\[-\` -\&\(-\+\:-\@\/])'), r' \1 '),
    (re.compile(r'([^0-9])([\.,])'), r'\1 \2 '),
    (re.compile(r'([\.,])([^0-9])'), r' \1 \2'),
    (re.compile(r'([0-9])(-)'), r'\1 \2 '),
]
RE_INTL = [
    (regex.compile(r'(\P{N})(\p{P})'), r'\1 \2 '),
    (regex.compile(r'(\p{P})(\P{N})'), r' \1 \2'),
    (regex.compile(r'(\p{S})'), r' \1 '),
]


def tok_13a(line):
    line = line.replace('<skipped>', '').replace('-\n', '').replace('\n', ' ')
    if '&' in line:
        line = line.replace('&quot;', '"').replace('&amp;', '&').replace('&lt;', '<').replace('&gt;', '>')
    line = ' {} '.format(line)
    for r, repl in RE_13A:
        line = r.sub(repl, line)
    return ' '.join(line.split())


def tok_intl(line):
    for r, repl in RE_INTL:
        line = r.sub(repl, line)
    return ' '.join(line.split())


def tok_char(line):
    return ' '.join(ch for ch in line)


POOL = (
    list("abcxyzABCXYZ0123456789") * 3
    + list(" " * 12)
    + list(".,.,-'\"!#$%&()*+/:;<=>?@[\\]^_`{|}~")
    + list("\u00e9\u00fc\u00df\u0130\u03a3\u03c3\u0416\u05d0\u0627\u0663\u0967\u0e51\uff11\u00bd\u2153\u2160")
    + list("\u3002\u3001\u300c\u300d\u201c\u201d\u2018\u2019\u2014\u2013\u2026\u00a1\u00bf\u00ab\u00bb\u060c\u061f\u0964\uff0c\uff01")
    + list("\u20ac\u00a3\u00a5\u00a9\u00ae\u2122\u00b0\u00b1\u00d7\u00f7\u221e\u2192\u2665\U0001F600\U0001F44D\u02c6\u00b4")
    + list("\u6771\u4eac\u65e5\u672c\u8a9e\uac00\u3042\u30a2")
    + list("\u0301\u0308\u200b\u200d\u00ad")
    + list("\u00a0\u3000\u2009\u2028\t\x1f\x85")
)
SPECIAL = ["&amp;", "&quot;", "&lt;", "&gt;", "<skipped>", "-\n", "\n", "3.14", "1,000", "U.S.", "e-mail", "..."]


def main():
    rng = random.Random(20261129)
    out = []
    for _ in range(400):
        n = rng.randint(0, 24)
        parts = []
        for _ in range(n):
            parts.append(rng.choice(SPECIAL) if rng.random() < 0.08 else rng.choice(POOL))
        s = ''.join(parts)
        out.append({
            "in": s,
            "13a": tok_13a(s.rstrip()),
            "intl": tok_intl(s.rstrip()),
            "char": tok_char(s),
            "lower": s.lower(),
            "split": s.split(),
        })
    for o in out:
        print(json.dumps(o, ensure_ascii=True))


if __name__ == '__main__':
    main()
