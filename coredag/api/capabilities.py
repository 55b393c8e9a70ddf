"""What a processor supplier's processors do that the runtime plans for, declared once by the
supplier as one frozen ``Capabilities`` value (sparkjet's, not Jet's: Jet's engine asks its
processors as they run; a Spark job is planned before). A supplier of the user's own (a class,
a lambda, a ``functools.partial``) declares nothing and gets the default ``capabilitiesOf`` gives."""

import abc
import functools
import inspect
import typing
from collections.abc import Callable

import attrs

from sparkjet.coredag.api.processor import AbstractProcessor, Processor
from sparkjet.coredag.api.saves_changes import SavesChanges
from sparkjet.coredag.model.dag import DAG


@attrs.frozen
class Capabilities:
    """What the processors of one supplier do, as the runtime plans for it."""

    hasFastPath: bool = False
    """A standard supplier: its processors can run as one function over a partition's batches."""

    takesOrdinalPairs: bool = False
    """Its fast path takes ``(ordinal, item)`` pairs, so it can serve a vertex with several inputs."""

    acceptsAnyRouting: bool = False
    """Its output stays right whichever processor an item reaches (a prepare step)."""

    readsThroughSpark: bool = False
    """A source whose input Spark reads (``sparkInput``), its rows turned into items on the workers."""

    readsStream: bool = False
    """A stream source: Spark reads it as a stream, one micro-batch's rows at a time."""

    finite: bool = False
    """A stream source whose stream ends once its items are read; the job then completes."""

    emitsWatermarks: bool = False
    """Its processors insert watermarks (a standard supplier's processors otherwise only forward
    them; a supplier without a fast path may always emit its own, as Jet needs no declaration)."""

    turnsIdle: bool = False
    """Its partitions turn idle after a time without events, letting other partitions' watermarks through."""

    needsHeartbeat: bool = False
    """Time alone moves its processors on, so the job must run without new input: a watermark
    following the wall clock, early window results, or a two-phase commit whose second phase
    must not wait for the next input."""

    exactlyOnce: bool = False
    """A sink that repeats no item after a restart."""

    savesChangesOnly: bool = False
    """Its processors can save only what changed since their last snapshot (they are
    ``SavesChanges``): a stream's micro-batch then writes a delta they give, not every entry."""

    output: object = None
    """Where a sink's items go (a list, files, a DataFrame, an assertion); None for a processor
    that keeps its items in the job."""


class DeclaresCapabilities(abc.ABC):
    """A processor supplier that declares its ``Capabilities``."""

    @abc.abstractmethod
    def capabilities(self) -> Capabilities:
        """Return what this supplier's processors do."""


def capabilitiesOf(supplier: Callable) -> Capabilities:
    """Return the capabilities ``supplier`` declares or, for a supplier of the user's own, the
    default: no fast path (so it may emit watermarks), a heartbeat where its processors may
    take part in a two-phase commit, and changes only where they save them."""
    if isinstance(supplier, DeclaresCapabilities):
        return supplier.capabilities()
    return Capabilities(needsHeartbeat=mayPrepareCommits(supplier), savesChangesOnly=makesChangeSavers(supplier))


def makesChangeSavers(supplier: Callable) -> bool:
    """Return whether the processors ``supplier`` makes save only what changed (are
    ``SavesChanges``), as the class it makes says; one that does not tell its class saves everything."""
    made = processorClass(supplier)
    return made is not None and issubclass(made, SavesChanges)


def readsStream(dag: DAG) -> bool:
    """Return whether ``dag`` is a stream job's: one of its suppliers declares a stream source."""
    return any(capabilitiesOf(vertex.processorSupplier).readsStream for vertex in dag.vertices())


def mayPrepareCommits(supplier: Callable) -> bool:
    """Return whether the processors ``supplier`` makes may take part in a two-phase commit
    (override ``snapshotCommitPrepare`` or ``snapshotCommitFinish``), as the class it makes
    says; a supplier that does not tell its class (a lambda) may."""
    made = processorClass(supplier)
    return made is None or any(
        getattr(made, method, None) is not getattr(Processor, method)
        for method in ("snapshotCommitPrepare", "snapshotCommitFinish")
    )


def processorClass(supplier: Callable) -> type | None:
    """Return the class of the processors ``supplier`` makes where it tells: the class itself,
    a ``functools.partial`` of one, or a callable whose return annotation names a class other
    than the contract's own."""
    if isinstance(supplier, type):
        return supplier
    if isinstance(supplier, functools.partial):
        return processorClass(supplier.func)
    function = supplier if inspect.isroutine(supplier) else type(supplier).__call__
    try:
        made = typing.get_type_hints(function).get("return")
    except Exception:  # an annotation that does not resolve tells nothing
        return None
    return made if isinstance(made, type) and made not in (Processor, AbstractProcessor) else None
