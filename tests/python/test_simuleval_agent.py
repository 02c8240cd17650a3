"""The SimulEval agents driven by SimulEval's sentence-level evaluation loop (docs/metrics.md A.1, written here
from that description): their instances equal `gpstream eval`'s and `gpstream eval --speech`'s, run as a
separate program."""

import json
import math
import subprocess

from conftest import read_wav
from gpstream.simuleval_agent import SpeechAgent, TextAgent
from gpstream.simuleval_api import EmptySegment, SpeechSegment, TextSegment


class TextInstance:
    """SimulEval's text input and output bookkeeping for one sentence: one word per send_source, step = words
    sent; every word of a prediction gets the step as its delay; done once a prediction is finished."""

    def __init__(self, source):
        self.source = source.split()
        self.step = 0
        self.words, self.delays = [], []
        self.finish_prediction = False

    def send_source(self):
        if self.step >= len(self.source):
            return EmptySegment(finished=True)
        segment = TextSegment(index=self.step, content=self.source[self.step], finished=False)
        self.step += 1
        return segment

    def receive_prediction(self, segment):
        if segment.finished:
            self.finish_prediction = True
        if segment.is_empty:
            return
        for word in segment.content.strip().split():
            self.words.append(word)
            self.delays.append(self.step)


def evaluate(agent, source, max_steps=10000):
    instance = TextInstance(source)
    agent.reset()
    for _ in range(max_steps):
        if instance.finish_prediction:
            break
        instance.receive_prediction(agent.pushpop(instance.send_source()))
    assert instance.finish_prediction, "the agent never finished"
    return instance


def test_agent_instances_equal_gpstream_eval(model_dir, eval_instances, dev_pairs):
    agent = TextAgent.from_options(model_dir, k=3, threads=1)
    for (source, _), expected in zip(dev_pairs, eval_instances):
        instance = evaluate(agent, source)
        assert " ".join(instance.words) == expected["prediction"]
        assert instance.delays == expected["delays"]


def test_agent_options_reach_the_session(model_dir):
    agent = TextAgent.from_options(model_dir, k=1, threads=1)
    instance = evaluate(agent, "Click the button to save the document.")
    assert instance.delays[0] == 1  # wait-1 writes after the first word


class SpeechInstance:
    """SimulEval's speech input bookkeeping for one utterance: each send_source sends the next
    ceil(segment_ms / 1000 * rate) samples (the last piece finished), step = samples sent; every word of a
    prediction gets step * 1000 / rate ms as its delay. The loop ends after the pop that follows the last
    piece."""

    def __init__(self, samples, rate):
        self.samples, self.rate = list(samples), rate
        self.step = 0
        self.words, self.delays = [], []

    @property
    def source_finished(self):
        return self.step == len(self.samples)

    def send_source(self, segment_ms):
        n = math.ceil(segment_ms / 1000 * self.rate)
        if self.step >= len(self.samples):
            return EmptySegment(finished=True)
        finished = self.step + n >= len(self.samples)
        piece = self.samples[self.step:self.step + n]
        self.step = min(self.step + n, len(self.samples))
        return SpeechSegment(index=self.step * 1000 / self.rate, content=piece, sample_rate=self.rate,
                             finished=finished)

    def receive_prediction(self, segment):
        if segment.is_empty:
            return
        for word in segment.content.strip().split():
            self.words.append(word)
            self.delays.append(self.step * 1000 / self.rate)


def evaluate_speech(agent, samples, rate, segment_ms):
    instance = SpeechInstance(samples, rate)
    agent.reset()
    while not instance.source_finished:
        instance.receive_prediction(agent.pushpop(instance.send_source(segment_ms)))
    return instance


# The log-mel front end's frames are 400 samples long, 160 apart: frame t reads samples [160 t, 160 t + 400),
# so the last frame of encoder chunk j (32 frames of 10 ms, 320 ms) reads up to sample 5120 j + 240: the
# chunk is complete 240 samples (15 ms) after its end. `gpstream eval --speech` counts a word written after
# j chunks as j * 320 ms; SimulEval counts the audio it had sent when the agent wrote, so with segments of
# S ms it records the first multiple of S at or past j * 320 + 15 ms, or the audio's length when the word
# came only with the end.
LOOKAHEAD_MS = 15


def simuleval_delay(eval_delay, segment_ms, source_length):
    if eval_delay >= source_length:
        return source_length
    return min(math.ceil((eval_delay + LOOKAHEAD_MS) / segment_ms) * segment_ms, source_length)


def test_speech_agent_instances_equal_gpstream_eval_speech_up_to_the_front_end_lookahead(
        gpstream_bin, speech_model_dir, speech_utterances_16k, tmp_path):
    utterances, manifest = speech_utterances_16k
    subprocess.run([gpstream_bin, "eval", "--speech", "-m", speech_model_dir, "--manifest", manifest,
                    "-t", "1", "--output", str(tmp_path / "out")], check=True, capture_output=True)
    logs = list((tmp_path / "out").rglob("instances.log"))
    assert len(logs) == 1, logs
    expected = [json.loads(line) for line in logs[0].read_text(encoding="utf-8").splitlines()]
    assert len(expected) == len(utterances)
    agent = SpeechAgent.from_options(speech_model_dir, threads=1)
    assert agent.model.chunk_ms == 320
    for segment_ms in (agent.model.chunk_ms, 5):
        for (wav, _), record in zip(utterances, expected):
            samples, rate = read_wav(wav)
            instance = evaluate_speech(agent, samples, rate, segment_ms)
            assert instance.words, "no words"
            assert " ".join(instance.words) == record["prediction"]
            total = record["source_length"]
            assert instance.step * 1000 / rate == total
            assert instance.delays == [simuleval_delay(d, segment_ms, total) for d in record["delays"]]


def test_speech_agent_reads_any_rate_and_flushes_on_the_last_piece(speech_model_dir):
    """22.05 kHz audio in 100 ms pieces: resampled inside, the same words as the 16 kHz run, none after the
    last piece, delays that never decrease and end at the audio's length."""
    import gpstream
    from conftest import SPEECH_DEV_DIR

    samples, rate = read_wav(SPEECH_DEV_DIR / "wav" / "dev-000002.wav")
    assert rate == 22050
    agent = SpeechAgent.from_options(speech_model_dir, threads=1)
    instance = evaluate_speech(agent, samples, rate, 100)
    whole = gpstream.Transcriber(agent.model)
    words = whole.push(gpstream.resample(samples, rate, 16000)) + whole.finish()
    assert instance.words == [w.text for w in words]
    assert instance.delays == sorted(instance.delays)
    assert instance.delays[-1] == len(samples) * 1000 / rate
