"""gpstream.SpeechModel, Transcriber and resample: words and delays do not depend on how the audio is split
into pushes (nor on the resampling being streamed), and misuse raises ValueError."""

import numpy
import pytest

import gpstream
from conftest import SPEECH_DEV_DIR, read_wav


@pytest.fixture(scope="module")
def speech(speech_model_dir):
    return gpstream.SpeechModel(speech_model_dir, threads=1)


def timed_words(words):
    return [(w.text, w.chunks, w.delay_ms) for w in words]


def test_pieces_and_streamed_resampling_give_the_whole_file_words(speech):
    samples, rate = read_wav(SPEECH_DEV_DIR / "wav" / "dev-000003.wav")
    whole = gpstream.Transcriber(speech)
    expected = whole.push(gpstream.resample(samples, rate, 16000)) + whole.finish()
    assert expected and whole.finished
    assert whole.transcript == " ".join(w.text for w in expected)
    pieces = gpstream.Transcriber(speech, sample_rate=rate)
    words = []
    for i in range(0, len(samples), 777):
        words += pieces.push(samples[i:i + 777])
    words += pieces.finish()
    assert timed_words(words) == timed_words(expected)
    assert pieces.audio_ms == whole.audio_ms
    # Delays never decrease, are whole chunks before the end, and end with the audio.
    delays = [w.delay_ms for w in words]
    assert delays == sorted(delays)
    assert all(d % speech.chunk_ms == 0 or d == whole.audio_ms for d in delays)


def test_misuse_raises_value_error(speech):
    t = gpstream.Transcriber(speech)
    t.push(numpy.zeros(1600, dtype=numpy.float32))
    t.finish()
    with pytest.raises(ValueError, match="reset"):
        t.push(numpy.zeros(160, dtype=numpy.float32))
    t.reset()
    assert t.push(numpy.zeros(160, dtype=numpy.float32)) == []
    with pytest.raises(ValueError, match="one-dimensional"):
        t.push(numpy.zeros((2, 160), dtype=numpy.float32))
    with pytest.raises(ValueError):
        gpstream.Transcriber(speech, sample_rate=0)
    with pytest.raises(ValueError):
        gpstream.resample(numpy.zeros(10, dtype=numpy.float32), 0)
    with pytest.raises(FileNotFoundError):
        gpstream.SpeechModel(str(SPEECH_DEV_DIR / "no-such-model"))
