"""gpstream from Python: streaming LLMs with group position encoding.

Load a model, run live Sessions (alone or batched by a Scheduler), transcribe speech as it streams in, lay
out training pairs exactly as the C++ trainer does, tokenize, and score with sacreBLEU- and SimulEval-exact metrics. docs/python.md has the
reference and examples.
"""

from ._gpstream import (  # noqa: F401  (the package's public names)
    Error,
    Event,
    MissingFileError,
    Model,
    Scheduler,
    Session,
    SpeechModel,
    TranscribedWord,
    Transcriber,
    __version__,
    corpus_bleu,
    corpus_chrf,
    latency,
    layout,
    resample,
    sentence_bleu,
    trainer_gradients,
)

__all__ = [
    "Error",
    "Event",
    "MissingFileError",
    "Model",
    "Scheduler",
    "Session",
    "SpeechModel",
    "TranscribedWord",
    "Transcriber",
    "__version__",
    "corpus_bleu",
    "corpus_chrf",
    "latency",
    "layout",
    "resample",
    "sentence_bleu",
    "trainer_gradients",
]
