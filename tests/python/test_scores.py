"""BLEU, chrF and latency from Python against sacreBLEU's and SimulEval's published test vectors
(docs/metrics.md B.5 and A.4, copied from those projects' test files and checked by running them)."""

import pytest

import gpstream

HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
REFS = [
    ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
    ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
]


@pytest.mark.parametrize(
    "tokenize, expected", [("13a", 48.530827), ("none", 49.1919566), ("intl", 43.91623493)]
)
def test_corpus_bleu_equals_sacrebleus_vectors(tokenize, expected):
    result = gpstream.corpus_bleu(HYPS, REFS, tokenize=tokenize)
    assert result["score"] == pytest.approx(expected, abs=1e-6)  # sacreBLEU's test tolerance is 1e-8 on 1e-2 scale
    assert "nrefs:2" in result["signature"] and ("tok:" + tokenize) in result["signature"]


def test_corpus_bleu_of_empty_hypotheses_is_zero():
    assert gpstream.corpus_bleu(["", "", ""], REFS)["score"] == 0.0


def test_sentence_bleu_uses_effective_order():
    # sacreBLEU's test_effective_order: "a test" against itself is 1.0 once only the orders present count.
    assert gpstream.sentence_bleu("a test", ["a test"])["score"] == pytest.approx(100.0, abs=1e-9)


@pytest.mark.parametrize(
    "hyps, refs, eps, expected",
    [
        (["aa"], ["ab"], False, 25.0),
        (["aa"], ["ab"], True, 8.3333),
        (["a", "b"], ["a", "c"], False, 50.0),
        (["a b c"], ["abc"], True, 50.0),
    ],
)
def test_corpus_chrf_equals_sacrebleus_vectors(hyps, refs, eps, expected):
    result = gpstream.corpus_chrf(hyps, [refs], beta=3, eps_smoothing=eps)
    assert result["score"] == pytest.approx(expected, abs=1e-4)  # test_chrf.py's tolerance


# SimulEval's latency of one instance, docs/metrics.md A.4 #2 and #3: |X|, delays, reference length, AL, LAAL, DAL.
@pytest.mark.parametrize(
    "source_length, delays, ref_len, al, laal, dal",
    [(4, [2, 2, 4, 4, 4, 4], 4, 1.666667, 2.0, 2.444444), (6, [1, 3, 3, 6], 5, 1.45, 1.45, 1.375)],
)
def test_latency_equals_simulevals_vectors(source_length, delays, ref_len, al, laal, dal):
    assert gpstream.latency(delays, source_length, ref_len, "AL") == pytest.approx(al, abs=1e-6)
    assert gpstream.latency(delays, source_length, ref_len, "LAAL") == pytest.approx(laal, abs=1e-6)
    assert gpstream.latency(delays, source_length, ref_len, "DAL") == pytest.approx(dal, abs=1e-6)


def test_scorer_errors_are_python_exceptions_with_the_message():
    with pytest.raises(ValueError, match="metric"):
        gpstream.latency([1, 2], 2, 2, "XYZ")
    with pytest.raises(ValueError, match="2 lines but reference 1 has 1"):
        gpstream.corpus_bleu(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match="tokeni"):
        gpstream.corpus_bleu(["a"], [["a"]], tokenize="nope")
