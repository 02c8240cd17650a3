#!/usr/bin/python3
"""Regenerates tests/eval/data/metric_golden.jsonl: corpus BLEU and chrF on seeded random corpora
(multi-reference, empty hypotheses, mixed scripts), computed by a plain-Python restatement of
sacreBLEU 2.6.0's algorithms (metrics.md B.2/B.3: Counter n-grams, max-over-references clipping,
closest reference length, compute_bleu with its smoothing branches; chrF statistics, best-F
reference choice, effective-order or eps F-score). It shares no code with src/eval and uses the
tokenizer restatements of gen_eval_tokenizer_golden.py (needs python3-regex).
Usage: /usr/bin/python3 scripts/gen_eval_metric_golden.py > tests/eval/data/metric_golden.jsonl
"""
import json
import math
import random
from collections import Counter

from gen_eval_tokenizer_golden import tok_13a, tok_intl, tok_char

TOK = {'13a': tok_13a, 'intl': tok_intl, 'char': tok_char, 'none': lambda s: s}
SMOOTH_DEFAULT = {'none': None, 'floor': 0.1, 'add-k': 1, 'exp': None}


def ngrams(tokens, n_max):
    c = Counter()
    for n in range(1, n_max + 1):
        for i in range(len(tokens) - n + 1):
            c[tuple(tokens[i:i + n])] += 1
    return c


def bleu(hyps, ref_streams, tok='13a', lowercase=False, smooth='exp', smooth_value=None, order=4, eff=False):
    prep = lambda s: TOK[tok]((s.lower() if lowercase else s).rstrip())
    sys_len = ref_len = 0
    correct = [0] * order
    total = [0] * order
    for i, hyp in enumerate(hyps):
        refs = [prep(s[i]) for s in ref_streams if s[i] != '']
        ref_counts = Counter()
        lens = []
        for r in refs:
            toks = r.split()
            lens.append(len(toks))
            for k, v in ngrams(toks, order).items():
                ref_counts[k] = max(ref_counts[k], v)
        htoks = prep(hyp).split()
        h = len(htoks)
        best = None
        for l in lens:
            if best is None or abs(h - l) < abs(h - best) or (abs(h - l) == abs(h - best) and l < best):
                best = l
        sys_len += h
        ref_len += best
        for k, v in ngrams(htoks, order).items():
            total[len(k) - 1] += v
            correct[len(k) - 1] += min(v, ref_counts.get(k, 0))
    counts, totals = list(correct), list(total)
    if smooth_value is None:
        smooth_value = SMOOTH_DEFAULT[smooth]
    bp = 1.0 if sys_len >= ref_len else (math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0)
    prec = [0.0] * order
    if not any(correct):
        return 0.0, counts, totals, sys_len, ref_len
    m = 1.0
    eff_order = order
    for n in range(1, order + 1):
        if smooth == 'add-k' and n > 1:
            correct[n - 1] += smooth_value
            total[n - 1] += smooth_value
        if total[n - 1] == 0:
            break
        if eff:
            eff_order = n
        if correct[n - 1] == 0:
            if smooth == 'exp':
                m *= 2
                prec[n - 1] = 100. / (m * total[n - 1])
            elif smooth == 'floor':
                prec[n - 1] = 100. * smooth_value / total[n - 1]
        else:
            prec[n - 1] = 100. * correct[n - 1] / total[n - 1]
    lg = lambda p: -9999999999 if p == 0.0 else math.log(p)
    return bp * math.exp(sum(lg(p) for p in prec[:eff_order]) / eff_order), counts, totals, sys_len, ref_len


PUNCT = set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')


def chrf_words(s):
    out = []
    for w in s.split():
        if len(w) == 1:
            out.append(w)
        elif w[-1] in PUNCT:
            out += [w[:-1], w[-1]]
        elif w[0] in PUNCT:
            out += [w[0], w[1:]]
        else:
            out.append(w)
    return out


def chrf_counters(s, nc, nw, ws):
    line = s if ws else ''.join(s.split())
    cs = [Counter(line[i:i + n] for i in range(len(line) - n + 1)) for n in range(1, nc + 1)]
    words = chrf_words(s)
    ws_ = [Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1)) for n in range(1, nw + 1)]
    return cs + ws_


def chrf_f(stats, beta, eps_mode):
    eps = 1e-16
    factor = beta ** 2
    score = 0.0
    ap = ar = 0.0
    eff = 0
    order = len(stats) // 3
    for i in range(order):
        h, r, m = stats[3 * i:3 * i + 3]
        p = m / h if h > 0 else eps
        rc = m / r if r > 0 else eps
        d = factor * p + rc
        score += ((1 + factor) * p * rc / d) if d > 0 else eps
        if h > 0 and r > 0:
            ap += p
            ar += rc
            eff += 1
    if eps_mode:
        return 100 * score / order
    if eff == 0:
        ap = ar = 0.0
    else:
        ap /= eff
        ar /= eff
    if ap + ar:
        return 100 * ((1 + factor) * ap * ar) / ((factor * ap) + ar)
    return 0.0


def chrf(hyps, ref_streams, nc=6, nw=0, beta=2, lowercase=False, ws=False, eps_mode=False):
    prep = lambda s: s.lower() if lowercase else s
    total = [0] * (3 * (nc + nw))
    for i, hyp in enumerate(hyps):
        hc = chrf_counters(prep(hyp), nc, nw, ws)
        best, best_f = None, -1.0
        for s in ref_streams:
            if s[i] == '':
                continue
            rc = chrf_counters(prep(s[i]), nc, nw, ws)
            st = []
            for h, r in zip(hc, rc):
                match = sum(min(v, r[k]) for k, v in h.items() if k in r)
                st += [sum(h.values()) if r else 0, sum(r.values()), match]
            f = chrf_f(st, beta, eps_mode)
            if f > best_f:
                best_f, best = f, st
        total = [a + b for a, b in zip(total, best)]
    return chrf_f(total, beta, eps_mode)


WORDS = ("the a cat dog sat on mat it was not is n't surprising man bit him first . , ! ? ; : ( ) \" ' - "
         "3.14 1,000 2019 U.S. e-mail Zürich naïve café “quoted” — … ¡hola! 東京 日本語 は です 。 、 "
         "€5 100% $20 &amp; &lt;tag&gt; Straße ΣΟΦΙΑ İstanbul").split()


def sentence(rng):
    n = rng.randint(0, 14)
    if rng.random() < 0.3:
        return ' '.join(rng.choice(WORDS) for _ in range(n))
    # glue some tokens without spaces to exercise the tokenizers
    s = ''
    for _ in range(n):
        s += rng.choice(WORDS) + (' ' if rng.random() < 0.8 else '')
    return s


def main():
    rng = random.Random(1129)
    for case in range(60):
        n = rng.randint(1, 12)
        refs1 = [sentence(rng) or 'x' for _ in range(n)]
        hyps = [(r if rng.random() < 0.3 else sentence(rng)) for r in refs1]
        streams = [refs1]
        if rng.random() < 0.5:
            streams.append([('' if rng.random() < 0.2 else sentence(rng)) for _ in range(n)])
        if case % 3 == 0:
            bo = dict(tok=rng.choice(['13a', 'intl', 'char', 'none']), lowercase=rng.random() < 0.3,
                      smooth=rng.choice(['exp', 'floor', 'add-k', 'none']), order=rng.randint(1, 6),
                      eff=rng.random() < 0.3)
            if bo['smooth'] in ('floor', 'add-k') and rng.random() < 0.5:
                bo['smooth_value'] = rng.choice([0.01, 0.5, 2.0])
            score, counts, totals, sl, rl = bleu(hyps, streams, **bo)
            print(json.dumps({"metric": "bleu", "options": bo, "hyps": hyps, "refs": streams, "score": score,
                              "counts": counts, "totals": totals, "sys_len": sl, "ref_len": rl}))
        elif case % 3 == 1:
            bo = dict(tok='13a')
            score, counts, totals, sl, rl = bleu(hyps, streams, **bo)
            print(json.dumps({"metric": "bleu", "options": bo, "hyps": hyps, "refs": streams, "score": score,
                              "counts": counts, "totals": totals, "sys_len": sl, "ref_len": rl}))
        else:
            co = dict(nc=rng.randint(1, 6), nw=rng.choice([0, 0, 1, 2]), beta=rng.choice([1, 2, 3]),
                      lowercase=rng.random() < 0.3, ws=rng.random() < 0.3, eps_mode=rng.random() < 0.4)
            print(json.dumps({"metric": "chrf", "options": co, "hyps": hyps, "refs": streams,
                              "score": chrf(hyps, streams, **co)}))


if __name__ == '__main__':
    main()
