"""Fixtures of the Python package's tests: the shipped models, the gpstream binary, the en-fr dev corpus and
three dev utterances of the speech model."""

import json
import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("GPSTREAM_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MODEL_DIR = SOURCE_DIR / "models" / "gpstream-en-fr"
SPEECH_MODEL_DIR = SOURCE_DIR / "models" / "gpstream-speech-en"
SPEECH_DEV_DIR = SOURCE_DIR / "tests" / "speech" / "data" / "shipped-dev"


@pytest.fixture(scope="session")
def model_dir():
    return str(MODEL_DIR)


@pytest.fixture(scope="session")
def model():
    import gpstream

    return gpstream.Model(str(MODEL_DIR), threads=1)


@pytest.fixture(scope="session")
def gpstream_bin():
    path = os.environ.get("GPSTREAM_BIN")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("GPSTREAM_BIN (the gpstream binary) is not set: run the tests through ctest")
    return path


@pytest.fixture(scope="session")
def dev_pairs():
    """The first 20 pairs of the en-fr dev corpus (source, reference)."""
    pairs = []
    with open(SOURCE_DIR / "data" / "corpus" / "en-fr.dev.tsv", encoding="utf-8") as f:
        for line in f:
            source, reference = line.rstrip("\n").split("\t")[:2]
            pairs.append((source, reference))
            if len(pairs) == 20:
                break
    return pairs


@pytest.fixture(scope="session")
def eval_instances(gpstream_bin, dev_pairs, tmp_path_factory):
    """`gpstream eval`'s instances.log records for the dev pairs at k = 3."""
    folder = tmp_path_factory.mktemp("eval")
    tsv = folder / "pairs.tsv"
    tsv.write_text("".join(f"{s}\t{r}\n" for s, r in dev_pairs), encoding="utf-8")
    subprocess.run(
        [gpstream_bin, "eval", "-m", str(MODEL_DIR), "--tsv", str(tsv), "-k", "3", "-t", "1",
         "--output", str(folder / "out")],
        check=True, capture_output=True,
    )
    logs = list((folder / "out").rglob("instances.log"))
    assert len(logs) == 1, logs
    return [json.loads(line) for line in logs[0].read_text(encoding="utf-8").splitlines()]


def read_wav(path):
    """A 16-bit PCM mono WAV as float32 samples (int16 / 32768, as gpstream's reader) and its rate."""
    import wave

    import numpy

    with wave.open(str(path), "rb") as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1, path
        data = numpy.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
        return data.astype(numpy.float32) / numpy.float32(32768), w.getframerate()


def write_wav(path, samples, rate):
    """float samples in [-1, 1) as a 16-bit PCM mono WAV (rounded, clipped)."""
    import wave

    import numpy

    data = numpy.clip(numpy.round(numpy.asarray(samples, dtype=numpy.float64) * 32768), -32768, 32767)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(data.astype("<i2").tobytes())


@pytest.fixture(scope="session")
def speech_model_dir():
    return str(SPEECH_MODEL_DIR)


@pytest.fixture(scope="session")
def speech_utterances_16k(tmp_path_factory):
    """The three shipped dev utterances (22.05 kHz) at 16 kHz through gpstream's resampler, as 16-bit WAVs in a
    speech manifest: [(wav path, transcript)] and the manifest's path."""
    import gpstream

    folder = tmp_path_factory.mktemp("speech")
    lines = (SPEECH_DEV_DIR / "manifest.tsv").read_text(encoding="utf-8").splitlines()
    header, rows = lines[0], [line.split("\t") for line in lines[1:]]
    utterances = []
    for i, row in enumerate(rows):
        samples, rate = read_wav(SPEECH_DEV_DIR / row[0])
        path = folder / f"utt{i}.wav"
        write_wav(path, gpstream.resample(samples, rate, 16000), 16000)
        utterances.append((str(path), row[1]))
        row[0] = path.name  # relative to the manifest, as manifests have them
    manifest = folder / "manifest.tsv"
    manifest.write_text(header + "\n" + "".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")
    return utterances, str(manifest)
