"""A processor test harness in the spirit of Jet's ``TestSupport.verifyProcessor``:
``verifyProcessor(supplier).input([...]).expectOutput([...]).verify()``. The modes it runs and
its options: docs/guide/core-dag.md, "Testing processors"."""

import difflib
import functools
import itertools
import logging
import operator
import pickle
from collections.abc import Callable, Iterable, Iterator, Sequence

import attrs

from sparkjet.coredag.api.processor import (
    ALL_ORDINALS,
    Inbox,
    Outbox,
    Processor,
    ProcessorContext,
    callIdleHook,
    restoreSnapshot,
)
from sparkjet.coredag.errors import ProcessorContractError
from sparkjet.coredag.model.watermark import Watermark

OutputChecker = Callable[[list, list], bool]
_FILLER = object()
LOGGER = logging.getLogger("sparkjet.testSupport")
"""Where a processor test logs what it feeds the processor and what the processor emits."""


@attrs.frozen
class _Mode:
    """How one run feeds the inbox and bounds the outbox."""

    name: str
    inboxLimit: int | None
    outboxCapacity: int | None
    fullOnAlternateCalls: bool = False
    restoreInterval: int | None = None
    """With snapshots: a new processor restores every ``restoreInterval``-th one (0: never)."""

    @property
    def prefix(self) -> str:
        """Return the start of every failure message of this mode."""
        return f"verifyProcessor(mode='{self.name}')"


_COOPERATIVE_MODES = (
    _Mode("inbox one-by-one, outbox capacity 1", 1, 1),
    _Mode("inbox all-at-once, outbox capacity 1", None, 1),
    _Mode("inbox one-by-one, outbox capacity 1 and full on alternate calls", 1, 1, True),
    _Mode("inbox all-at-once, outbox capacity 1 and full on alternate calls", None, 1, True),
)
_NON_COOPERATIVE_MODES = (
    _Mode("inbox one-by-one, outbox unbounded", 1, None),
    _Mode("inbox all-at-once, outbox unbounded", None, None),
)


def _snapshotModes(outboxCapacity: int | None) -> tuple[_Mode, ...]:
    """Jet's snapshot modes: restore after every snapshot, every second one, or never."""
    return (
        _Mode("snapshot and restore after every item", 1, outboxCapacity, restoreInterval=1),
        _Mode("snapshot after every item, restore every second one", 1, outboxCapacity, restoreInterval=2),
        _Mode("snapshot after every item, never restored", 1, outboxCapacity, restoreInterval=0),
    )


def sameItemsAnyOrder(expected: list, actual: list) -> bool:
    """An output checker: the same items as often as expected, in any order (hashable or not)."""
    remaining = list(actual)
    for item in expected:
        try:
            remaining.remove(item)
        except ValueError:
            return False
    return not remaining


@attrs.frozen
class TestSupport:
    """A processor test: its inputs, expected outputs and context; ``verify()`` runs it."""

    __test__ = False  # a harness, not a pytest test class

    supplier: Callable[[], Processor]
    inputLists: tuple[tuple, ...] = ()
    priorities: tuple[int, ...] = ()
    expectedOutputs: tuple[tuple, ...] = ()
    checker: OutputChecker = operator.eq
    processorContext: ProcessorContext = ProcessorContext("testVertex", 0, 1)
    doSnapshots: bool = True
    callComplete: bool = True
    logInputOutput: bool = True

    def input(self, items: Iterable) -> "TestSupport":
        """Return the test with ``items`` as the input of ordinal 0."""
        return self.inputs([items])

    def inputs(
        self, lists: Iterable[Iterable], priorities: Sequence[int] | None = None
    ) -> "TestSupport":
        """Return the test with list i as the input of ordinal i; lower priorities go first."""
        inputLists = tuple(tuple(items) for items in lists)
        priorities = (0,) * len(inputLists) if priorities is None else tuple(priorities)
        if len(priorities) != len(inputLists):
            raise ValueError(
                f"verifyProcessor: inputs() got {len(inputLists)} input list(s) but "
                f"{len(priorities)} priorities; give one priority per input list"
            )
        return attrs.evolve(self, inputLists=inputLists, priorities=priorities)

    def expectOutput(self, items: Iterable) -> "TestSupport":
        """Return the test expecting ``items``, in order, from the processor's only ordinal."""
        return self.expectOutputs([items])

    def expectOutputs(self, lists: Iterable[Iterable]) -> "TestSupport":
        """Return the test expecting list i from ordinal i; the outbox gets one bucket per list."""
        return attrs.evolve(self, expectedOutputs=tuple(tuple(items) for items in lists))

    def outputChecker(self, checker: OutputChecker) -> "TestSupport":
        """Return the test comparing ``checker(expected, actual)`` per ordinal instead of ==."""
        return attrs.evolve(self, checker=checker)

    def context(self, context: ProcessorContext) -> "TestSupport":
        """Return the test passing ``context`` to the processor's ``init``."""
        return attrs.evolve(self, processorContext=context)

    def disableSnapshots(self) -> "TestSupport":
        """Return the test without the snapshot modes: for a processor that keeps no state
        across a snapshot (a batch processor, say), as Jet's ``disableSnapshots()``."""
        return attrs.evolve(self, doSnapshots=False)

    def disableCompleteCall(self) -> "TestSupport":
        """Return the test without calling ``complete()``: for a stream processor, whose flush
        in ``complete()`` must not run, as Jet's ``disableCompleteCall()``."""
        return attrs.evolve(self, callComplete=False)

    def disableLogging(self) -> "TestSupport":
        """Return the test without logging its inputs and outputs, as Jet's ``disableLogging()``."""
        return attrs.evolve(self, logInputOutput=False)

    def verify(self) -> None:
        """Run a fresh processor in every mode; raise AssertionError at the first failure."""
        first = self.supplier()
        cooperative = first.isCooperative()
        modes = _COOPERATIVE_MODES if cooperative else _NON_COOPERATIVE_MODES
        if self.doSnapshots:
            modes += _snapshotModes(1 if cooperative else None)
        processors = itertools.chain([first], iter(self.supplier, None))
        for mode, processor in zip(modes, processors):  # stops before making a spare processor
            self._verifyRun(mode, processor)

    def _verifyRun(self, mode: _Mode, processor: Processor) -> None:
        inputsBefore = self._inputReprs()
        outputs = self._outputs(mode, processor)
        if self._inputReprs() != inputsBefore:
            raise AssertionError(
                f"{mode.prefix}: the processor changed the items it received; it must not "
                f"mutate them:\n{_diff(inputsBefore, self._inputReprs(), 'before', 'after')}"
            )
        for ordinal, (expected, actual) in enumerate(zip(self.expectedOutputs, outputs)):
            if not self.checker(list(expected), actual):
                raise AssertionError(
                    f"{mode.prefix}: output of ordinal {ordinal} differs:\n"
                    f"{_diff(list(map(repr, expected)), list(map(repr, actual)))}"
                )

    def _outputs(self, mode: _Mode, processor: Processor) -> list[list]:
        run = _Run(mode, processor, len(self.expectedOutputs), self.supplier, self.callComplete, self.logInputOutput)
        order = sorted(range(len(self.inputLists)), key=self.priorities.__getitem__)
        try:
            return run.outputs(self.processorContext, [(o, self.inputLists[o]) for o in order])
        except AssertionError:
            raise
        except Exception as error:
            error.add_note(f"raised in {mode.prefix}")
            raise

    def _inputReprs(self) -> list[str]:
        return [repr(item) for items in self.inputLists for item in items]


def verifyProcessor(supplier: Callable[[], Processor]) -> TestSupport:
    """Start a processor test: ``verifyProcessor(supplier).input(..).expectOutput(..).verify()``."""
    return TestSupport(supplier)


def _diff(old: list[str], new: list[str], oldName="expected", newName="actual") -> str:
    lines = difflib.unified_diff(old, new, oldName, newName, lineterm="")
    return "\n".join(lines) or "(the items' reprs are equal; the output checker rejected them)"


class _CheckedOutbox(Outbox):
    """An Outbox whose misuse fails the verification with an AssertionError naming the mode."""

    def __init__(self, bucketCount: int, capacity: int | None, modePrefix: str) -> None:
        super().__init__(bucketCount, capacity)
        self._modePrefix = modePrefix

    def offer(self, item, ordinal: int = ALL_ORDINALS) -> bool:
        """Offer as Outbox does; a refused item not offered again, or a bad ordinal, fails."""
        try:
            return super().offer(item, ordinal)
        except ProcessorContractError as error:
            raise AssertionError(f"{self._modePrefix}: {error}") from error


class _Run:
    """One run of a processor in one mode: drives it, asserts progress, collects its output."""

    def __init__(
        self, mode: _Mode, processor: Processor, bucketCount: int, supplier: Callable[[], Processor],
        callComplete: bool, logs: bool,
    ) -> None:
        self._mode, self._processor, self._supplier = mode, processor, supplier
        self._callComplete, self._logs = callComplete, logs and LOGGER.isEnabledFor(logging.INFO)
        self._outbox = _CheckedOutbox(bucketCount, mode.outboxCapacity, mode.prefix)
        self._outputs: list[list] = [[] for _ in range(bucketCount)]
        self._filledLast = False
        self._snapshots = 0
        self._context: ProcessorContext | None = None

    def outputs(self, context: ProcessorContext, inputs: list[tuple[int, tuple]]) -> list[list]:
        """Run the processor over ``(ordinal, items)`` in order; return its output per ordinal."""
        self._context = context
        self._log("running the test")
        try:
            self._processor.init(self._outbox, context)
            self._snapshotAndRestore()
            for ordinal, items in inputs:
                self._consume(ordinal, items)
                self._repeat(f"completeEdge({ordinal})", lambda: self._processor.completeEdge(ordinal))
            if self._callComplete:
                self._log("input processed, calling complete()")
                self._complete()
        finally:
            self._processor.close()
        return self._outputs

    def _complete(self) -> None:
        """Call ``complete()`` until it returns True; with snapshots, snapshot after every step
        that emitted (a new processor may finish the job)."""
        if self._mode.restoreInterval is None:
            self._repeat("complete()", lambda: self._processor.complete())
            return
        done = False
        while not done:
            done, emittedOrFull = self._call(lambda: self._processor.complete())
            if not done and not emittedOrFull:
                self._fail("complete() returned False but emitted nothing although the outbox had room")
            if not done and not self._outbox.hasUnfinishedItem():
                self._snapshotAndRestore()

    def _snapshotAndRestore(self) -> None:
        """In a snapshot mode, save the processor's state and, every ``restoreInterval``-th
        time, go on with a new processor that restores it (the entries pickled, as they travel)."""
        interval = self._mode.restoreInterval
        if interval is None:
            return
        self._repeat("saveToSnapshot()", lambda: self._processor.saveToSnapshot())
        entries = self._outbox.drainSnapshotBucket()
        self._snapshots += 1
        if interval == 0 or self._snapshots % interval:
            return
        try:
            restored = pickle.loads(pickle.dumps(entries))
        except Exception as error:
            self._fail(f"saveToSnapshot() saved an entry that cannot be pickled: {error}")
        self._processor.close()
        self._processor = self._supplier()
        self._processor.init(self._outbox, self._context)
        if restored:
            self._call(lambda: restoreSnapshot(self._processor, Inbox(restored)), fillable=False)
        self._repeat("finishSnapshotRestore()", lambda: self._processor.finishSnapshotRestore())

    def _consume(self, ordinal: int, items: tuple) -> None:
        """Feed one ordinal's items in batches of the mode's inbox limit, as the engine does; a
        watermark goes to ``tryProcessWatermark`` once the items before it are processed."""
        for isWatermark, run in itertools.groupby(items, key=lambda item: isinstance(item, Watermark)):
            if isWatermark:
                for watermark in run:
                    tryWatermark = functools.partial(self._tryProcessWatermark, watermark)
                    self._repeat(f"tryProcessWatermark({watermark!r})", tryWatermark)
                    self._snapshotAndRestore()
            else:
                self._consumeItems(ordinal, run)
        self._repeat("tryProcess()", lambda: callIdleHook(self._processor), fillable=False)

    def _tryProcessWatermark(self, watermark: Watermark) -> bool:
        return self._processor.tryProcessWatermark(watermark)

    def _consumeItems(self, ordinal: int, source: Iterator) -> None:
        while not (inbox := Inbox(itertools.islice(source, self._mode.inboxLimit))).isEmpty():
            self._log("Input-%d: %s", ordinal, list(inbox))
            self._repeat("tryProcess()", lambda: callIdleHook(self._processor), fillable=False)
            while not inbox.isEmpty():
                self._process(ordinal, inbox)
            self._snapshotAndRestore()

    def _process(self, ordinal: int, inbox: Inbox) -> None:
        """Call process() once: it must remove an item or emit, unless the outbox was full."""
        before = inbox.size()
        _, emittedOrFull = self._call(lambda: self._processor.process(ordinal, inbox))
        if not emittedOrFull and inbox.size() >= before:
            self._fail(
                f"process({ordinal}) made no progress: it removed no item from the inbox and "
                "emitted nothing although the outbox had room"
            )

    def _repeat(self, method: str, call: Callable[[], bool], fillable: bool = True) -> None:
        """Call until True: each False must come with output or a full outbox."""
        done, emittedOrFull = self._call(call, fillable)
        while not done:
            if not emittedOrFull:
                self._fail(
                    f"{method} returned False but emitted nothing although the outbox had room"
                )
            done, emittedOrFull = self._call(call, fillable)
        if self._outbox.hasUnfinishedItem():
            self._fail(
                f"{method} returned True while the outbox held an item it had refused: "
                "the processor must offer that item again until it is accepted"
            )

    def _call(self, call: Callable[[], object], fillable: bool = True) -> tuple[object, bool]:
        """Call the processor; return its result and whether it emitted or the outbox was full."""
        full = fillable and self._fill()
        result = call()
        return result, self._drain() or full

    def _fill(self) -> bool:
        """In the modes that ask for it, fill every bucket before every other call."""
        fill = (
            self._mode.fullOnAlternateCalls
            and not self._filledLast
            and not self._outbox.hasUnfinishedItem()
        )
        if fill:
            self._outbox.offer(_FILLER)
        self._filledLast = fill
        return fill

    def _drain(self) -> bool:
        """Move the emitted items to the output lists; return whether there were any."""
        before = sum(map(len, self._outputs))
        for ordinal, output in enumerate(self._outputs):
            emitted = [i for i in self._outbox.drainBucket(ordinal) if i is not _FILLER]
            if emitted:
                self._log("Output-%d: %s", ordinal, emitted)
            output.extend(emitted)
        return sum(map(len, self._outputs)) > before

    def _log(self, message: str, *args) -> None:
        if self._logs:
            LOGGER.info("%s: " + message, self._mode.prefix, *args)

    def _fail(self, message: str) -> None:
        raise AssertionError(f"{self._mode.prefix}: {message}")
