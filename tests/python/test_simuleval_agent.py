"""The SimulEval agent driven by SimulEval's sentence-level evaluation loop (docs/metrics.md A.1, written here
from that description): its instances equal `gpstream eval`'s, run as a separate program."""

from gpstream.simuleval_agent import TextAgent
from gpstream.simuleval_api import EmptySegment, TextSegment


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
