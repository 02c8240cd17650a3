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
    with pytest.raises(ValueError, match="--agreement sets the local-agreement policy"):
        gpstream.Session(model, policy="confidence", agreement=3)
    with pytest.raises(ValueError, match=r"agreement must be in \[2, 16\], got 17"):
        gpstream.Session(model, policy="local-agreement", agreement=17)
    with pytest.raises(TypeError, match="unexpected keyword"):
        gpstream.Session(model, wait=3)
    with pytest.raises(FileNotFoundError):
        gpstream.Model(str(tmp_path / "no-such-model"))


def test_forwards_release_the_gil(model, dev_pairs):
    import threading
    import time

    source = " ".join(s for s, _ in dev_pairs * 2)  # one long line: about a second of forwards
    times = {}

    def work():
        times["entered"] = time.perf_counter()
        model.translate(source, k=3)
        times["returned"] = time.perf_counter()

    worker = threading.Thread(target=work)
    worker.start()
    first_run = None  # when this thread first ran Python 50 ms or more into the call
    while worker.is_alive():
        now = time.perf_counter()
        if first_run is None and "entered" in times and now > times["entered"] + 0.05:
            first_run = now
    worker.join()
    assert times["returned"] - times["entered"] > 0.2  # long enough for the check to mean something
    # Released, this thread runs beside the worker's forwards, long before the call returns. Held through the
    # call, it could run only once the call was over (less a switch interval of 5 ms at most).
    assert first_run is not None and first_run < times["returned"] - 0.05


def test_threads_take_turns_on_one_model(model, dev_pairs):
    import threading

    source = " ".join(s for s, _ in dev_pairs[:6])
    expected = model.translate(source, k=3)["translation"]
    results = []
    threads = [threading.Thread(target=lambda: results.append(model.translate(source, k=3)["translation"]))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected, expected]
