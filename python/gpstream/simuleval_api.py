"""SimulEval 1.1's agent API: SimulEval's own classes where it is installed, otherwise the same protocol here.

SimulEval is not a Debian package. Where it is importable, the agents of gpstream.simuleval_agent derive from
its classes, so `simuleval --agent-class gpstream.simuleval_agent.TextAgent` runs them. Elsewhere these
stand-ins follow its documented agent protocol (docs/metrics.md, "Agent API"): an agent keeps AgentStates,
push() adds a source segment to them, pop() asks policy() once and turns its action into a target segment.
"""

try:  # pragma: no cover - taken only where SimulEval is installed
    from simuleval.agents import GenericAgent, SpeechToTextAgent, TextToTextAgent  # noqa: F401
    from simuleval.agents.actions import ReadAction, WriteAction  # noqa: F401
    from simuleval.agents.states import AgentStates  # noqa: F401
    from simuleval.data.segments import EmptySegment, SpeechSegment, TextSegment  # noqa: F401

    SIMULEVAL_INSTALLED = True
except ImportError:
    SIMULEVAL_INSTALLED = False

    class EmptySegment:
        """No content: a read, or the end of the source (finished=True)."""

        def __init__(self, index=0, finished=False):
            self.index = index
            self.content = []
            self.finished = finished
            self.is_empty = True
            self.config = {}

    class TextSegment:
        """A word of source text, or the target text one write produced."""

        def __init__(self, index=0, content="", finished=False):
            self.index = index
            self.content = content
            self.finished = finished
            self.is_empty = False
            self.config = {}

    class SpeechSegment:
        """A piece of source audio: a list of samples at sample_rate; finished on the last piece."""

        def __init__(self, index=0, content=None, sample_rate=16000, finished=False):
            self.index = index
            self.content = [] if content is None else content
            self.sample_rate = sample_rate
            self.finished = finished
            self.is_empty = False
            self.config = {}

    class ReadAction:
        def is_read(self):
            return True

    class WriteAction:
        def __init__(self, content, finished=False):
            self.content = content
            self.finished = finished

        def is_read(self):
            return False

    class AgentStates:
        """The source read so far (a list of words, or of samples at source_sample_rate), and whether source
        and target are finished."""

        def __init__(self):
            self.reset()

        def reset(self):
            self.source = []
            self.target = []
            self.source_finished = False
            self.target_finished = False
            self.source_sample_rate = 0
            self.config = {}

        def update_source(self, segment):
            self.source_finished = segment.finished
            if segment.is_empty:
                return
            if isinstance(segment, SpeechSegment):
                self.source += segment.content
                self.source_sample_rate = segment.sample_rate
            else:
                self.source.append(segment.content)

        def update_target(self, segment):
            self.target_finished = segment.finished

    class GenericAgent:
        source_type = None
        target_type = None

        def __init__(self, args=None):
            if args is not None:
                self.args = args
            self.states = self.build_states()
            self.reset()

        def build_states(self):
            return AgentStates()

        def reset(self):
            self.states.reset()

        def policy(self):
            raise NotImplementedError

        def push(self, segment):
            self.states.update_source(segment)

        def pop(self):
            if self.states.target_finished:
                return EmptySegment(finished=True)
            action = self.policy()
            if action.is_read():
                return EmptySegment()
            segment = TextSegment(index=0, content=action.content, finished=action.finished)
            self.states.update_target(segment)
            return segment

        def pushpop(self, segment):
            self.push(segment)
            return self.pop()

        @staticmethod
        def add_args(parser):
            pass

        @classmethod
        def from_args(cls, args):
            return cls(args)

    class TextToTextAgent(GenericAgent):
        source_type = "text"
        target_type = "text"

    class SpeechToTextAgent(GenericAgent):
        source_type = "speech"
        target_type = "text"
