"""Models, Sessions and the Scheduler from Python, against `gpstream eval` run as a separate program on the
same pairs: the same translations and delays."""

import pytest

import gpstream


def run_session(session, source):
    """Pushes the source word by word, running the session after each; returns (words, delays)."""
    words, delays = [], []

    def drain():
        while True:
            event = session.step()
            if event.kind == "word":
                words.append(event.word)
                delays.append(event.stream_delay)
            elif event.kind in ("need_source", "finished"):
                return event.kind

    for word in source.split():
        session.push_source(word)
        drain()
    session.end_source()
    assert drain() == "finished"
    return words, delays


def test_translate_equals_gpstream_eval(model, dev_pairs, eval_instances):
    for (source, _), instance in zip(dev_pairs, eval_instances):
        result = model.translate(source, k=3)
        assert result["translation"] == instance["prediction"]
        assert result["delays"] == instance["delays"]


def test_a_session_stepped_from_python_equals_gpstream_eval(model, dev_pairs, eval_instances):
    for (source, _), instance in list(zip(dev_pairs, eval_instances))[:8]:
        words, delays = run_session(gpstream.Session(model, continuous=True, k=3), source)
        assert " ".join(words) == instance["prediction"]
        assert delays == instance["delays"]


def test_a_scheduler_gives_each_session_its_own_translation(model, dev_pairs, eval_instances):
    scheduler = gpstream.Scheduler(model)
    sources = [source for source, _ in dev_pairs[:3]]
    sessions = [gpstream.Session(model, continuous=True, k=3) for _ in sources]
    handles = [scheduler.add(s) for s in sessions]
    for session, source in zip(sessions, sources):
        session.push_source(source)
        session.end_source()
    words = {h: [] for h in handles}
    finished = set()
    for _ in range(10000):
        if len(finished) == len(handles):
            break
        for handle, event in scheduler.round():
            if event.kind == "word":
                words[handle].append(event.word)
            elif event.kind == "finished":
                finished.add(handle)
    assert finished == set(handles)
    for handle, instance in zip(handles, eval_instances[:3]):
        assert " ".join(words[handle]) == instance["prediction"]


def test_tokenize_and_detokenize_round_trip(model):
    text = "Click the button to save the document."
    ids = model.tokenize(text)
    assert ids and all(0 <= i < model.n_vocab for i in ids)
    assert model.detokenize(ids).strip() == text
    with pytest.raises(ValueError, match="outside the vocabulary"):
        model.detokenize([model.n_vocab])


def test_errors_carry_the_message(model, tmp_path):
    with pytest.raises(ValueError, match="paradigm"):
        gpstream.Session(model, paradigm="sideways")
    with pytest.raises(ValueError, match="-k sets wait-k"):
        gpstream.Session(model, policy="confidence", k=3)
    with pytest.raises(TypeError, match="unexpected keyword"):
        gpstream.Session(model, wait=3)
    with pytest.raises(FileNotFoundError):
        gpstream.Model(str(tmp_path / "no-such-model"))


def test_forwards_release_the_gil_and_threads_share_a_model(model, dev_pairs):
    import threading

    source = " ".join(s for s, _ in dev_pairs[:6])  # a long line: a few hundred milliseconds of forwards
    expected = model.translate(source, k=3)["translation"]
    results = []
    worker = threading.Thread(target=lambda: results.append(model.translate(source, k=3)["translation"]))
    other = threading.Thread(target=lambda: results.append(model.translate(source, k=3)["translation"]))
    spins = 0
    worker.start()
    other.start()
    while worker.is_alive() or other.is_alive():
        spins += 1  # runs only while no thread holds the GIL through a forward
    assert results == [expected, expected]  # the two threads took turns on the model
    assert spins > 20000  # ~400,000 measured; with the GIL held, only the moments between the two calls
