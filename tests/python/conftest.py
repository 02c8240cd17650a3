"""Fixtures of the Python package's tests: the shipped en-fr model, the gpstream binary and the dev corpus."""

import json
import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("GPSTREAM_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MODEL_DIR = SOURCE_DIR / "models" / "gpstream-en-fr"


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
