"""Every wrapper of a processor forwards the whole processor contract, as Jet's ``ProcessorWrapper``
does: a stream's micro-batch run through each of sparkjet's wrappers reaches the wrapped processor's
two-phase commit (``snapshotCommitFinish`` first, ``saveToSnapshot`` and ``snapshotCommitPrepare``
last), and a wrapped processor that ``SavesChanges`` saves only its changes, and forgets keys,
through the wrapper. A wrapper class this test does not build fails it."""

import importlib
import pkgutil

import attrs
import pytest

import sparkjet.coredag.processors
from sparkjet.coredag.api.capabilities import Capabilities, capabilitiesOf
from sparkjet.coredag.api.processor import AbstractProcessor, ProcessorContext
from sparkjet.coredag.api.processor_wrapper import ProcessorWrapper, StandardSupplierWrapper, SupplierWrapper, unwrapped
from sparkjet.coredag.api.saves_changes import SavesChanges, replayChanges
from sparkjet.coredag.api.standard import StandardProcessorSupplier
from sparkjet.coredag.processors.coaggregation import TaggedInputP
from sparkjet.coredag.processors.peeking import ItemLogger, PeekingP, PeekingSupplier
from sparkjet.coredag.runtime.tasklet import Restored, TaskletSpec, returning, runCooperatively

ITEMS = ["a", "b", "c"]


class Recording(AbstractProcessor):
    """Passes its items on (untagged, given as ``(ordinal, item)``) and notes each item and each
    call of the snapshot's contract (into ``calls``, shared)."""

    def __init__(self, calls: list) -> None:
        self.calls = calls
        self.lateEventsDropped = 3

    def tryProcess0(self, item) -> bool:
        item = item[1] if isinstance(item, tuple) else item
        if not self.tryEmit(item):
            return False
        self.calls.append(f"item {item}")
        return True

    def saveToSnapshot(self) -> bool:
        self.calls.append("save")
        return self.tryEmitToSnapshot("state", len(self.calls))

    def restoreFromSnapshot(self, key, value) -> None:
        self.calls.append(f"restore {key}")

    def snapshotCommitPrepare(self) -> bool:
        self.calls.append("prepare")
        return True

    def snapshotCommitFinish(self, success: bool) -> bool:
        self.calls.append(f"finish({success})")
        return True


class RecordingChanges(Recording, SavesChanges):
    """A ``Recording`` processor that saves its changes."""

    def saveChangesToSnapshot(self) -> bool:
        self.calls.append("save changes")
        return self.tryEmitToSnapshot("changed", 1)

    def forgetFromSnapshot(self, key: object) -> None:
        self.calls.append(f"forget {key}")


class RecordingP(StandardProcessorSupplier):
    """A standard supplier of recording processors (the fast path is not run here)."""

    def __init__(self, processorClass: type, calls: list) -> None:
        self.processorClass, self.calls = processorClass, calls

    def __call__(self) -> Recording:
        return self.processorClass(self.calls)

    def capabilities(self) -> Capabilities:
        """Return a standard supplier's, saving changes only where its processors do."""
        return attrs.evolve(super().capabilities(), savesChangesOnly=issubclass(self.processorClass, SavesChanges))

    def batchFunction(self, context):
        raise AssertionError("the cooperative loop runs these processors")


LOGGER = ItemLogger("peeked")
WRAPPERS = {
    "peeked": lambda inner: PeekingSupplier(inner, LOGGER),
    "peeked standard": lambda inner: PeekingP(inner, LOGGER),
    "tagged inputs": TaggedInputP,
    "peeked tagged inputs": lambda inner: PeekingP(TaggedInputP(inner), LOGGER),
}


def wrapperClasses(base: type) -> set[type]:
    """Return the subclasses of ``base`` among sparkjet's processors, at any depth, but those made
    for a wrapped processor that saves changes."""
    for module in pkgutil.iter_modules(sparkjet.coredag.processors.__path__):
        importlib.import_module(f"sparkjet.coredag.processors.{module.name}")
    found, classes = set(), [base]
    while classes:
        for subclass in classes.pop().__subclasses__():
            classes.append(subclass)
            if subclass.__module__.startswith("sparkjet.coredag.processors.") and not issubclass(subclass, SavesChanges):
                found.add(subclass)
    return found


def test_every_wrapper_is_tested():
    calls = []
    made = [wrap(RecordingP(Recording, calls)) for wrap in WRAPPERS.values()]
    assert {type(supplier) for supplier in made} == wrapperClasses(SupplierWrapper)
    assert {type(supplier()) for supplier in made} == wrapperClasses(ProcessorWrapper)


def test_a_standard_wrapper_forwards_what_a_standard_supplier_defines():
    """What ``StandardProcessorSupplier`` defines hides it from ``__getattr__``: the wrapper
    defines all of it (but ``__call__``, each wrapper's own, and ``fastPath``, made of ``batchFunction``)."""
    defined = {name for name in vars(StandardProcessorSupplier) if not name.startswith("_")} - {"fastPath"}
    assert defined <= set(vars(StandardSupplierWrapper))


def microBatch(supplier) -> tuple[list, tuple]:
    """Run a stream's micro-batch after a committed snapshot, through ``supplier``'s processor,
    saving only its changes where its supplier's capabilities say it can; return what it
    emitted and the entries it saved."""
    spec = TaskletSpec("v", supplier, 1, (0,), 1, 1024, 1)
    start = Restored(entries=lambda: [], saves=True, changesOnly=capabilitiesOf(supplier).savesChangesOnly)
    saved: list = []
    output = runCooperatively(spec, ProcessorContext("v", 0, 1), ((0, item) for item in ITEMS), start)
    emitted = [item for _, item in returning(output, saved)]
    return emitted, saved[0].entries


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_a_wrapped_processor_commits_in_two_phases(wrap):
    calls = []
    emitted, saved = microBatch(wrap(RecordingP(Recording, calls)))
    assert calls == ["finish(True)", *(f"item {item}" for item in ITEMS), "save", "prepare"]
    assert emitted == ITEMS
    assert saved == (("state", 5),), "a processor that does not save changes saves its state"
    assert getattr(wrap(RecordingP(Recording, calls))(), "lateEventsDropped", 0) == 3, "what the runtime asks of it"


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_a_wrapped_processor_that_saves_changes_saves_them_through_the_wrapper(wrap):
    calls = []
    supplier = wrap(RecordingP(RecordingChanges, calls))
    emitted, saved = microBatch(supplier)
    assert calls[-2:] == ["save changes", "prepare"] and saved == (("changed", 1),)
    processor = supplier()
    assert isinstance(processor, SavesChanges) and isinstance(processor, type(supplier()))
    replayChanges(processor, {"kept": 1}, ["gone"])
    assert calls[-3:] == ["forget gone", "forget kept", "restore kept"]


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_a_wrapped_supplier_has_the_capabilities_of_the_one_it_wraps(wrap):
    inner = RecordingP(Recording, [])
    inner.needsHeartbeat = True
    supplier = wrap(inner)
    assert getattr(supplier, "needsHeartbeat", False) and unwrapped(supplier) is inner
    assert not hasattr(supplier, "windowsByEventTime")
