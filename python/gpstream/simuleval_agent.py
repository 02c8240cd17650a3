"""SimulEval agents that run a gpstream model in-process.

    simuleval --agent-class gpstream.simuleval_agent.TextAgent --gpstream-model models/gpstream-en-fr \
        --source dev.en --target dev.fr --output run
    simuleval --agent-class gpstream.simuleval_agent.SpeechAgent --gpstream-model models/gpstream-speech-en \
        --source wav_list.txt --target transcripts.txt --source-segment-size 320 --output run

TextAgent: each source word SimulEval sends is pushed to a continuous gpstream Session (sentence by sentence,
every word read, as `gpstream eval` does); the Session then runs until it needs the next word or finishes,
and whatever words it wrote go back as one write, so each gets SimulEval's delay of that step.

SpeechAgent: each audio segment SimulEval sends goes into a gpstream Transcriber (resampled to 16 kHz by
gpstream's streaming resampler where the audio has another rate); the words the completed encoder chunks let
the model write go back as one write, and the last segment flushes the rest. With --source-segment-size
equal to the model's chunk (320 ms for models/gpstream-speech-en) and 16 kHz audio, its instances are
`gpstream eval --speech`'s.

The options are those of `gpstream eval` with a --gpstream- prefix; unset ones take the model's own (its
gpstream.json).
"""

import argparse

import numpy

from . import Model, Session, SpeechModel, Transcriber
from .simuleval_api import ReadAction, SpeechToTextAgent, TextToTextAgent, WriteAction

# (option, Session keyword, type): the settings an agent passes on; None leaves the model's.
_OPTIONS = [
    ("k", "k", int),
    ("paradigm", "paradigm", str),
    ("phi", "phi", str),
    ("policy", "policy", str),
    ("tau", "tau", float),
    ("agreement", "agreement", int),
    ("min-lag", "min_lag", int),
    ("max-lag", "max_lag", int),
    ("beam", "beam", int),
    ("max-tokens", "max_tokens", int),
    ("sentence-ends", "sentence_ends", str),
]


def session_settings(args):
    """The Session keywords of parsed --gpstream-* options (unset ones left out)."""
    settings = {}
    for option, keyword, _ in _OPTIONS:
        value = getattr(args, "gpstream_" + option.replace("-", "_"), None)
        if value is not None:
            settings[keyword] = value
    return settings


class _GpstreamOptions:
    """The --gpstream-* command line both agents take, building an agent without one, and loading its model
    (model_class) with its settings."""

    model_class = None

    def __init__(self, args):
        super().__init__(args)
        self.model = self.model_class(args.gpstream_model, threads=args.gpstream_threads)
        self.settings = session_settings(args)

    @staticmethod
    def add_args(parser):
        parser.add_argument("--gpstream-model", required=True, help="a gpstream model directory")
        parser.add_argument("--gpstream-threads", type=int, default=0, help="threads (0: all cores)")
        for option, _, kind in _OPTIONS:
            parser.add_argument("--gpstream-" + option, type=kind, default=None,
                                help="as gpstream eval's --%s (default: the model's)" % option)

    @classmethod
    def from_options(cls, model, **options):
        """An agent from keyword options (model=path, k=3, ...), without a command line."""
        parser = argparse.ArgumentParser()
        cls.add_args(parser)
        argv = ["--gpstream-model", model]
        for name, value in options.items():
            argv += ["--gpstream-" + name.replace("_", "-"), str(value)]
        return cls(parser.parse_args(argv))


class TextAgent(_GpstreamOptions, TextToTextAgent):
    """Text to text: a gpstream model's simultaneous translation under SimulEval's protocol."""

    model_class = Model

    def reset(self):
        super().reset()
        self._session = None
        self._pushed = 0
        self._source_ended = False

    def policy(self):
        states = self.states
        if self._session is None:
            self._session = Session(self.model, continuous=True, **self.settings)
        while self._pushed < len(states.source):
            self._session.push_source(states.source[self._pushed])
            self._pushed += 1
        if states.source_finished and not self._source_ended:
            self._session.end_source()
            self._source_ended = True
        words, finished = [], False
        while True:
            event = self._session.step()
            if event.kind == "word":
                words.append(event.word)
            elif event.kind == "need_source":
                break
            elif event.kind == "finished":
                finished = True
                break
        if words or finished:
            return WriteAction(" ".join(words), finished=finished)
        return ReadAction()


class SpeechAgent(_GpstreamOptions, SpeechToTextAgent):
    """Speech to text: a gpstream speech model's streaming recognition under SimulEval's protocol."""

    model_class = SpeechModel

    def reset(self):
        super().reset()
        self._transcriber = None
        self._pushed = 0

    def policy(self):
        states = self.states
        if self._transcriber is None:
            self._transcriber = Transcriber(self.model, sample_rate=states.source_sample_rate or 16000,
                                            **self.settings)
        samples = states.source[self._pushed:]
        self._pushed = len(states.source)
        words = self._transcriber.push(numpy.asarray(samples, dtype=numpy.float32)) if samples else []
        if states.source_finished:  # SimulEval stops after this write: everything left goes in it
            words += self._transcriber.finish()
            return WriteAction(" ".join(w.text for w in words), finished=True)
        if words:
            return WriteAction(" ".join(w.text for w in words), finished=False)
        return ReadAction()
