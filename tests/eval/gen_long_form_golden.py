#!/usr/bin/python3
"""Writes the long-form evaluation golden files under tests/eval/data/long_form/: the resegmentation and
StreamLAAL of run files, computed here from the definitions in docs/evaluation.md ("Long-form evaluation"),
independently of src/eval/long_form.cpp.

Definitions:
  * words: split on ASCII whitespace (space, \\t, \\n, \\v, \\f, \\r); case-sensitive.
  * resegmentation: cuts 0 = c_0 <= c_1 <= ... <= c_K = N minimising sum_k lev(hyp[c_{k-1}:c_k], ref_k)
    (Levenshtein over words); among equal totals the lexicographically smallest cut vector.
    Computed here segment by segment: best[k][i] = least cost of cutting hyp[i:] into references k..K-1,
    then the cuts chosen greedily from the left, each the smallest that keeps the optimum. Runs of at most
    10 hypothesis words and 4 references are also checked by enumerating every cut vector.
  * StreamLAAL: s_i = sum of |X_k| for k < i; the words of segment i get d'_j = d_j - s_i;
    LAAL_i = (1/tau) sum_{j<=tau} (d'_j - (j-1) |X_i| / max(|Y_i|, |Y*_i|)), tau the first j with
    d'_j >= |X_i|, else |Y_i|; StreamLAAL = mean over non-empty segments. StreamLAAL_CA: the same over
    elapsed ms, with the spans in ms (source_ms for word units, source_length for ms units).

Run: /usr/bin/python3 tests/eval/gen_long_form_golden.py   (standard library only; rewrites the files)
Outputs: NAME.input.json (a run file, as `gpstream score --long-form` reads it) and NAME.expected.json for
the hand-made fixtures below, and random.jsonl: one {"input": run, "expected": ...} per line, seeded.
"""
import itertools
import json
import os
import random
import re

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "long_form")


def words(text):
    return [w for w in re.split(r"[ \t\n\v\f\r]+", text) if w]


def lev(a, b):
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
        prev = cur
    return prev[len(b)]


def resegment(hyp, refs):
    n, k = len(hyp), len(refs)
    inf = float("inf")
    # best[m][i]: least cost of hyp[i:] split over refs[m:]
    best = [[inf] * (n + 1) for _ in range(k + 1)]
    best[k][n] = 0
    for m in range(k - 1, -1, -1):
        for i in range(n + 1):
            best[m][i] = min(lev(hyp[i:e], refs[m]) + best[m + 1][e] for e in range(i, n + 1))
    cuts = [0]
    for m in range(k - 1):
        i = cuts[-1]
        for e in range(i, n + 1):
            if lev(hyp[i:e], refs[m]) + best[m + 1][e] == best[m][i]:
                cuts.append(e)
                break
    cuts.append(n)
    if n <= 10 and k <= 4:
        def cost(c):
            return sum(lev(hyp[c[m]:c[m + 1]], refs[m]) for m in range(k))
        every = [[0] + list(mid) + [n] for mid in itertools.combinations_with_replacement(range(n + 1), k - 1)]
        least = min(cost(c) for c in every)
        assert cuts == min(c for c in every if cost(c) == least), (hyp, refs, cuts)
    assert sum(lev(hyp[cuts[m]:cuts[m + 1]], refs[m]) for m in range(k)) == best[0][0]
    return cuts, best[0][0]


def laal(rel, x, ref_len):
    y = len(rel)
    denom = max(y, ref_len)
    tau = y
    for j in range(1, y + 1):
        if rel[j - 1] >= x:
            tau = j
            break
    return sum(rel[j - 1] - (j - 1) * x / denom for j in range(1, tau + 1)) / tau


def stream_laal(delays, cuts, spans, ref_lens):
    per, start = [], 0.0
    for i, x in enumerate(spans):
        seg = delays[cuts[i]:cuts[i + 1]]
        per.append(laal([d - start for d in seg], x, ref_lens[i]) if seg else None)
        start += x
    scored = [v for v in per if v is not None]
    return per, (sum(scored) / len(scored) if scored else None)


def expected(run):
    refs = [words(s["reference"]) for s in run["sentences"]]
    hyp = run["hypothesis"]["words"]
    cuts, cost = resegment(hyp, refs)
    ref_lens = [len(r) for r in refs]
    spans = [float(s["source_length"]) for s in run["sentences"]]
    per, mean = stream_laal(run["hypothesis"]["delays"], cuts, spans, ref_lens)
    out = {"cuts": cuts, "edit_distance": cost,
           "segments": [" ".join(hyp[cuts[i]:cuts[i + 1]]) for i in range(len(refs))],
           "empty_sentences": sum(1 for v in per if v is None), "laal": per, "StreamLAAL": mean}
    if "elapsed" in run["hypothesis"]:
        ms = spans if run["source_unit"] == "ms" else [float(s["source_ms"]) for s in run["sentences"]]
        per_ca, mean_ca = stream_laal(run["hypothesis"]["elapsed"], cuts, ms, ref_lens)
        out["laal_ca"] = per_ca
        out["StreamLAAL_CA"] = mean_ca
    return out


# Hand-made runs (the C++ tests derive some of them by hand too).
HAND = {
    # 2 references, 7 hypothesis words; word delays, elapsed with 500 ms per source word.
    "two_sentences": {
        "source_unit": "word",
        "sentences": [{"source_length": 4, "source_ms": 2000, "reference": "the cat sleeps ."},
                      {"source_length": 3, "source_ms": 1500, "reference": "it rains ."}],
        "hypothesis": {"words": ["the", "cat", "sleeps", "it", "is", "raining", "."],
                       "delays": [1, 2, 4, 5, 6, 7, 7],
                       "elapsed": [600, 1100, 2100, 2600, 3100, 3600, 3650]}},
    # A tie: "x" fits either reference equally badly; the earliest cut wins.
    "tie": {
        "source_unit": "word",
        "sentences": [{"source_length": 2, "reference": "a b"},
                      {"source_length": 2, "reference": "c d"}],
        "hypothesis": {"words": ["a", "x", "d"], "delays": [1, 2, 4]}},
    # An empty segment in the middle, audio (ms) units.
    "empty_middle": {
        "source_unit": "ms",
        "sentences": [{"source_length": 1000, "reference": "one two"},
                      {"source_length": 800, "reference": "three"},
                      {"source_length": 1200, "reference": "four five six"}],
        "hypothesis": {"words": ["one", "two", "four", "five", "six"],
                       "delays": [400, 1000, 2200, 2600, 3000],
                       "elapsed": [450, 1100, 2300, 2800, 3300]}},
    # Hypothesis longer than the references (insertions), and shorter (one word for three sentences).
    "longer": {
        "source_unit": "word",
        "sentences": [{"source_length": 3, "reference": "A b c"},
                      {"source_length": 2, "reference": "d e"}],
        "hypothesis": {"words": ["A", "A", "b", "c", "c", "d", "x", "e", "e"],
                       "delays": [1, 1, 2, 3, 3, 4, 5, 5, 5]}},
    "shorter": {
        "source_unit": "word",
        "sentences": [{"source_length": 2, "reference": "p q"},
                      {"source_length": 2, "reference": "r s"},
                      {"source_length": 2, "reference": "t u"}],
        "hypothesis": {"words": ["s"], "delays": [3]}},
}


def random_run(rng):
    vocab = ["a", "b", "c", "A", "d"]
    k = rng.randint(1, 5)
    refs = [[rng.choice(vocab) for _ in range(rng.randint(1, 4))] for _ in range(k)]
    flat = [w for r in refs for w in r]
    hyp = []
    for w in flat:
        u = rng.random()
        if u < 0.6:
            hyp.append(w)
        elif u < 0.75:
            hyp.append(rng.choice(vocab))
        elif u < 0.9:
            hyp += [w, rng.choice(vocab)]
    if rng.random() < 0.1:
        hyp = []
    unit = rng.choice(["word", "ms"])
    if unit == "word":
        spans = [rng.randint(1, 6) for _ in range(k)]
    else:
        spans = [rng.choice([320, 640.5, 1000, 1280]) for _ in range(k)]
    total = sum(spans)
    delays = sorted(rng.randint(0, int(total)) if unit == "word" else round(rng.uniform(0, total), 1)
                    for _ in hyp)
    sentences = [{"source_length": spans[i], "reference": " ".join(refs[i])} for i in range(k)]
    run = {"source_unit": unit, "sentences": sentences, "hypothesis": {"words": hyp, "delays": delays}}
    if rng.random() < 0.7:
        run["hypothesis"]["elapsed"] = sorted(round(rng.uniform(0, total * 700), 1) for _ in hyp)
        if unit == "word":
            for s in sentences:
                s["source_ms"] = s["source_length"] * rng.choice([250, 400.5])
    return run


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, run in HAND.items():
        with open(os.path.join(OUT, name + ".input.json"), "w") as f:
            json.dump(run, f, indent=1)
            f.write("\n")
        with open(os.path.join(OUT, name + ".expected.json"), "w") as f:
            json.dump(expected(run), f, indent=1)
            f.write("\n")
    rng = random.Random(20261206)
    with open(os.path.join(OUT, "random.jsonl"), "w") as f:
        for _ in range(300):
            run = random_run(rng)
            f.write(json.dumps({"input": run, "expected": expected(run)}) + "\n")


if __name__ == "__main__":
    main()
