#!/usr/bin/python3
"""Writes tests/eval/data/wer_golden.jsonl: WER counts for seeded random (reference, hypothesis)
pairs, computed here from the definition, independently of src/eval/wer.cpp.

Definition (docs/speech.md, "Evaluation"):
  * basic normalisation: NFKC, str.lower(), then per code point: an apostrophe (U+0027, U+2019)
    between two letters/marks/numbers stays (as U+0027), any other apostrophe, punctuation (P*) or
    symbol (S*) becomes a space, a format character (Cf) is dropped, a control character (Cc) that is
    not whitespace becomes a space; words = str.split(). "none": words = str.split() of the raw text.
  * alignment: unit-cost Levenshtein over words; among minimum-edit alignments the one with the most
    substitutions is counted.
This file computes the edit distance with a full matrix, then a second matrix of the most
substitutions reachable through optimal cells, then walks one optimal path back counting
S/D/I/H; pairs of up to 6 x 6 words are also checked by enumerating every alignment.

Run: /usr/bin/python3 tests/eval/gen_wer_golden.py > tests/eval/data/wer_golden.jsonl
Only the standard library is used (unicodedata of Python 3.11: Unicode 14.0; every character drawn
below is older than that, so libutf8proc's Unicode 15.0 tables agree on it).
"""
import functools
import json
import random
import sys
import unicodedata


def normalize_basic(text):
    s = unicodedata.normalize("NFKC", text).lower()
    out = []
    for i, ch in enumerate(s):
        cat = unicodedata.category(ch)
        if ch in ("'", "\u2019"):
            inside = (0 < i < len(s) - 1 and unicodedata.category(s[i - 1])[0] in "LMN"
                      and unicodedata.category(s[i + 1])[0] in "LMN")
            out.append("'" if inside else " ")
        elif cat[0] in "PS":
            out.append(" ")
        elif cat == "Cf":
            pass
        elif cat == "Cc" and not ch.isspace():
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out).split()


def words_of(text, norm):
    return normalize_basic(text) if norm == "basic" else text.split()


def count_dp(ref, hyp):
    n, m = len(ref), len(hyp)
    dist = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        dist[i][0] = i
    for j in range(m + 1):
        dist[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            dist[i][j] = min(dist[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]),
                             dist[i - 1][j] + 1, dist[i][j - 1] + 1)
    # Most substitutions over the optimal moves only.
    most = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            options = []
            cost = int(ref[i - 1] != hyp[j - 1])
            if dist[i][j] == dist[i - 1][j - 1] + cost:
                options.append(most[i - 1][j - 1] + cost)
            if dist[i][j] == dist[i - 1][j] + 1:
                options.append(most[i - 1][j])
            if dist[i][j] == dist[i][j - 1] + 1:
                options.append(most[i][j - 1])
            most[i][j] = max(options)
    # Walk back along moves that keep both the distance and the substitution count optimal.
    i, j = n, m
    s = d = ins = h = 0
    while i > 0 or j > 0:
        if i > 0 and j > 0:
            cost = int(ref[i - 1] != hyp[j - 1])
            if dist[i][j] == dist[i - 1][j - 1] + cost and most[i][j] == most[i - 1][j - 1] + cost:
                s += cost
                h += 1 - cost
                i, j = i - 1, j - 1
                continue
        if i > 0 and dist[i][j] == dist[i - 1][j] + 1 and most[i][j] == most[i - 1][j]:
            d += 1
            i -= 1
            continue
        assert j > 0 and dist[i][j] == dist[i][j - 1] + 1 and most[i][j] == most[i][j - 1]
        ins += 1
        j -= 1
    assert s + d + ins == dist[n][m] and s == most[n][m]
    return {"S": s, "D": d, "I": ins, "H": h, "N": n, "M": m}


def count_brute(ref, hyp):
    """Every alignment, as (edits, -subs, S, D, I, H); the best by (edits, -subs)."""
    @functools.lru_cache(maxsize=None)
    def go(i, j):
        if i == len(ref) and j == len(hyp):
            return {(0, 0, 0, 0)}
        results = set()
        if i < len(ref) and j < len(hyp):
            same = ref[i] == hyp[j]
            for s, d, k, h in go(i + 1, j + 1):
                results.add((s + (not same), d, k, h + same))
        if i < len(ref):
            for s, d, k, h in go(i + 1, j):
                results.add((s, d + 1, k, h))
        if j < len(hyp):
            for s, d, k, h in go(i, j + 1):
                results.add((s, d, k + 1, h))
        return results
    best = min(go(0, 0), key=lambda t: (t[0] + t[1] + t[2], -t[0]))
    return {"S": best[0], "D": best[1], "I": best[2], "H": best[3], "N": len(ref), "M": len(hyp)}


VOCAB = [
    "the", "a", "cat", "sat", "on", "mat", "dog", "bit", "man", "it", "was", "not", "is", "of",
    "The", "CAT", "Dog", "don't", "Don\u2019t", "o'clock", "rock\u2019n\u2019roll", "students'", "'tis",
    "caf\u00e9", "cafe\u0301", "CAF\u00c9", "Z\u00fcrich", "ZU\u0308RICH", "stra\u00dfe", "\u03a3\u039f\u03a6\u0399\u0391",
    "\u039f\u0394\u039f\u03a3", "\u0130stanbul", "\ufb01sh", "\uff21\uff22\uff23", "abc", "\u00bd", "3.14", "1,000",
    "2019.", "e-mail", "U.S.", "$20", "20%", "\u201cquoted\u201d", "(aside)", "\u00a1hola!", "\u2026",
    "\u2014", "-", ",", ".", "?", "!", ";", ":", "&", "co\u00adop", "zero\u200bwidth", "\u4e2d\u6587",
    "\u3067\u3059", "\u0645\u0631\u062d\u0628\u0627", "\u0928\u092e\u0938\u094d\u0924\u0947", "x\u00b2", "\u2163",
    "it's", "its", "'", "''", "a'", "'b", "7'8", "\u00c5ngstr\u00f6m", "\u212b",
]
SPACES = [" ", " ", " ", "  ", "\t", "\n", " \u00a0", "\u3000", " \x1f"]


def sentence(rng, n):
    out = ""
    for k in range(n):
        if k:
            out += rng.choice(SPACES)
        out += rng.choice(VOCAB)
    if rng.random() < 0.2:
        out = rng.choice(["", " ", "\n"]) + out + rng.choice(["", " ", "\n", "."])
    return out


def mutate(rng, ref_tokens):
    hyp = []
    for t in ref_tokens:
        r = rng.random()
        if r < 0.12:
            continue  # deletion
        if r < 0.25:
            hyp.append(rng.choice(VOCAB))  # substitution (or an accidental match)
        else:
            hyp.append(t.upper() if rng.random() < 0.1 else t)
        if rng.random() < 0.1:
            hyp.append(rng.choice(VOCAB))  # insertion
    return hyp


def main():
    rng = random.Random(20261130)
    cases = [
        ("", "", "basic"), ("", "a b", "basic"), ("a b c", "", "basic"), ("a b", "b a", "basic"),
        ("a b c", "c a b", "basic"), ("Hello, World!", "hello world", "basic"), (".,!?", "", "basic"),
        ("a b", "x a b y", "basic"), ("a a a", "a", "basic"), ("a", "b b b", "basic"),
        ("Hello, World!", "hello world", "none"), ("", "x", "none"), ("a b c d", "a x c", "none"),
    ]
    for k in range(300):
        norm = "basic" if k % 5 else "none"
        n = rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 12, 20]) if k % 7 else rng.randint(0, 3)
        ref_tokens = [rng.choice(VOCAB) for _ in range(n)]
        hyp_tokens = mutate(rng, ref_tokens) if rng.random() < 0.85 else [rng.choice(VOCAB) for _ in range(rng.randint(0, 8))]
        join = lambda toks: "".join((rng.choice(SPACES) if i else "") + t for i, t in enumerate(toks))
        ref = join(ref_tokens)
        hyp = join(hyp_tokens)
        if rng.random() < 0.1:
            ref = sentence(rng, rng.randint(0, 6))
        cases.append((ref, hyp, norm))
    for ref, hyp, norm in cases:
        rw, hw = words_of(ref, norm), words_of(hyp, norm)
        counts = count_dp(rw, hw)
        if len(rw) <= 6 and len(hw) <= 6:
            assert count_brute(rw, hw) == counts, (rw, hw, counts)
        rec = {"ref": ref, "hyp": hyp, "norm": norm, "ref_words": rw, "hyp_words": hw}
        rec.update(counts)
        sys.stdout.write(json.dumps(rec, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    main()
