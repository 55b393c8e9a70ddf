"""Which stream jobs need a heartbeat because a processor may prepare commits: one whose class
overrides the two-phase commit, or whose class its supplier does not tell (a lambda), wrapped or
not; none of sparkjet's own processors, so a job of them alone gets no heartbeat for it."""

import functools

from sparkjet import AbstractProcessor, AggregateOperations, Pipeline, Sinks, Sources, WindowDefinition, wholeItem
from sparkjet.coredag.api.capabilities import capabilitiesOf, mayPrepareCommits
from sparkjet.coredag.processors.peeking import ItemLogger, PeekingSupplier
from sparkjet.coredag.runtime.stream.stream_dag import unpeeked
from sparkjet.planner.planning import plan


class Committing(AbstractProcessor):
    def __init__(self, directory: str = "") -> None:
        self.directory = directory

    def snapshotCommitFinish(self, success: bool) -> bool:
        return True


class Passing(AbstractProcessor):
    def tryProcess0(self, item) -> bool:
        return self.tryEmit(item)


def makesPassing() -> Passing:
    return Passing()


def test_a_supplier_that_makes_a_committing_processor_may_prepare_commits():
    assert mayPrepareCommits(Committing)
    assert mayPrepareCommits(functools.partial(Committing, "out"))
    assert capabilitiesOf(PeekingSupplier(functools.partial(Committing, "out"), ItemLogger("peeked"))).needsHeartbeat
    assert mayPrepareCommits(lambda: Passing()), "a lambda does not tell what it makes"


def test_a_supplier_that_tells_it_makes_no_committing_processor_prepares_none():
    assert not mayPrepareCommits(Passing)
    assert not mayPrepareCommits(makesPassing)
    assert not capabilitiesOf(PeekingSupplier(Passing, ItemLogger("peeked"))).needsHeartbeat


def test_none_of_sparkjets_own_processors_prepares_commits():
    p = Pipeline.create()
    words = p.readFrom(Sources.fileWatcher("/nowhere")).withTimestamps(len, 0).peek()
    counts = words.groupingKey(wholeItem()).window(WindowDefinition.sliding(10, 5)).aggregate(AggregateOperations.counting())
    counts.writeTo(Sinks.list("counts"))
    words.groupingKey(wholeItem()).mapStateful(list, lambda seen, word: seen.append(word)).writeTo(Sinks.files("/nowhere-out"))
    dag = plan(p).dag
    assert [vertex.name for vertex in dag if mayPrepareCommits(unpeeked(vertex))] == []
