"""What a stream job's Core DAG says about running it on micro-batches, read before it runs:
its stream sources and what they can replay, the vertices no stream reaches, whether time alone
must move it on, which sinks it can write and which are exactly once. Pure: no pyspark here."""

import functools
import inspect

import attrs

from sparkjet.coredag.api.capabilities import capabilitiesOf
from sparkjet.coredag.api.processor_wrapper import unwrapped
from sparkjet.coredag.errors import DagError, JobError
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.processors.sinks import CreateDataFrame, FilesSinkP


def streamSources(dag: DAG) -> list:
    """Return the vertices of ``dag`` that read a stream."""
    return [vertex for vertex in dag if capabilitiesOf(vertex.processorSupplier).readsStream]


def unpeeked(vertex) -> object:
    """Return a vertex's processor supplier as it is under its wrappers (``peek()``'s, a
    co-aggregation's input tagging)."""
    return unwrapped(vertex.processorSupplier)


def staticVertices(dag: DAG) -> frozenset[str]:
    """Return the vertices no stream source reaches: a stream job runs them once (the batch
    side of a hash join, say), as Jet reads a batch stage once per job."""
    reached = [vertex.name for vertex in streamSources(dag)]
    for name in reached:
        reached += [edge.destName for edge in dag.getOutboundEdges(name) if edge.destName not in reached]
    return frozenset(vertex.name for vertex in dag) - set(reached)


def needsHeartbeat(dag: DAG, physical) -> bool:
    """Return whether time alone moves the job on, so it must run without new input: a
    watermark following the wall clock (ingestion time), early results, an idle timeout where
    several processors insert watermarks (one turning idle lets the others' through), or a
    processor that may prepare commits, whose second phase must not wait for the next input."""
    capabilities = {vertex.name: physical.vertex(vertex.name).capabilities for vertex in dag}
    inserting = [name for name, declared in capabilities.items() if declared.emitsWatermarks]
    several = sum(physical.vertex(name).parallelism for name in inserting) > 1
    return any(declared.needsHeartbeat or (several and declared.turnsIdle) for declared in capabilities.values())


def checkStreamSinks(dag: DAG) -> None:
    """Refuse the sink a stream job cannot write: a DataFrame, made once per job."""
    for vertex in dag:
        if isinstance(capabilitiesOf(vertex.processorSupplier).output, CreateDataFrame):
            raise DagError(
                f"Sink '{vertex.name}' takes a stream, but Sinks.dataframe makes one whole DataFrame per job: "
                "write a stream to Sinks.list, Sinks.files, Sinks.json, Sinks.logger or Sinks.noop"
            )


def notExactlyOnce(dag: DAG) -> list[str]:
    """Return the sinks that may repeat an item after a restart: a logger logs a micro-batch run
    again a second time, and a sink of the user's own may do anything; files sinks rewrite a
    micro-batch's files under the same names, a driver's list starts empty in the new process."""
    return [
        vertex.name
        for vertex in dag
        if not dag.getOutboundEdges(vertex.name) and not capabilitiesOf(vertex.processorSupplier).exactlyOnce
    ]


def resumingOutputs(dag: DAG, claimed: set[str]) -> DAG:
    """Return ``dag`` with its files sinks writing into directories an earlier run of the job
    claimed taking them as they are (a restarted job goes on writing there)."""

    def resuming(vertex):
        supplier = vertex.processorSupplier
        if isinstance(supplier, FilesSinkP) and supplier.directory in claimed:
            return attrs.evolve(vertex, processorSupplier=attrs.evolve(supplier, resumes=True))
        return vertex

    return dag.withVertices(resuming)


def processorKind(vertex) -> str:
    """Return what makes a vertex's state: its processor's class and, where it aggregates, the
    functions of its AggregateOperation, so a restart tells counting's state from summing's."""
    supplier = unpeeked(vertex)
    described = {", ".join(functionName(fn) for fn in functionsOf(op)): None for op in operationsIn(supplier)}
    return type(supplier).__qualname__ + "".join(f"[{functions}]" for functions in described)


def operationsIn(value: object, depth: int = 4) -> list[AggregateOperation]:
    """Return the AggregateOperations ``value`` holds, in its attrs fields ``depth`` levels down."""
    if isinstance(value, AggregateOperation):
        return [value]
    if depth == 0 or not attrs.has(type(value)):
        return []
    fields = attrs.asdict(value, recurse=False).values()
    return [operation for field in fields for operation in operationsIn(field, depth - 1)]


def functionsOf(operation: AggregateOperation) -> list:
    """Return the functions of ``operation`` that shape its accumulator."""
    return [operation.createFn, operation.accumulateFn, operation.combineFn, operation.deductFn]


def functionName(fn) -> str:
    """Return the name ``fn`` is known by: its qualified name, a partial's function and arguments."""
    if isinstance(fn, functools.partial):
        return f"{functionName(fn.func)}({', '.join(functionName(argument) for argument in fn.args)})"
    if fn is None or not callable(fn):
        return repr(fn) if fn is None else type(fn).__qualname__
    return fn.__qualname__ if inspect.isroutine(fn) or isinstance(fn, type) else type(fn).__qualname__


def checkReplayable(dag: DAG, jobName: str) -> None:
    """Refuse, for a job with a processing guarantee, a stream source that cannot give its
    items again after a restart: the restarted job would lose them, or fail on them."""
    for vertex in streamSources(dag):
        reason = unpeeked(vertex).cannotReplay()
        if reason is not None:
            raise JobError(f"Job '{jobName}' has a processing guarantee, but its source '{vertex.name}' cannot keep it: {reason}")
