"""PySpark and pandas habits: the error that names the Jet call doing what was meant.

A hint is what to write instead. A call in it that starts with a dot (``.aggregate(...)``) is
one on the very object the name was missing from, and exists there; ``stage.x(...)`` is one on
another stage the hint names, ``jet.x(...)`` one on the Jet client."""

import re

from sparkjet.coredag.errors import SourceLocation, shorten
from sparkjet.pipeline.errors import PipelineError

JET_EQUIVALENTS = {
    "groupBy": ".groupingKey(keyFn).aggregate(AggregateOperations.counting()) (or another operation)",
    "groupByKey": ".groupingKey(keyFn).aggregate(AggregateOperations.toList())",
    "reduceByKey": ".groupingKey(keyFn).aggregate(AggregateOperations.reducing(emptyValue, toValueFn, combineFn))",
    "agg": ".aggregate(AggregateOperations.allOf(...)) (per key: .groupingKey(keyFn).aggregate(...))",
    "reduce": ".aggregate(AggregateOperations.reducing(emptyValue, toValueFn, combineFn))",
    "count": ".aggregate(AggregateOperations.counting()) (per key: .groupingKey(keyFn).aggregate(AggregateOperations.counting()))",
    "collect": ".writeTo(Sinks.list(name)), then jet.getList(name) once the job has run",
    "take": ".writeTo(Sinks.list(name)), then jet.getList(name)[:n] once the job has run",
    "show": ".peek() (logs the items as they pass) or .writeTo(Sinks.logger())",
    "join": ".hashJoin(other, JoinClause.onKeys(leftKeyFn, rightKeyFn), mapFn)",
    "union": ".merge(other)",
    "unionAll": ".merge(other)",
    "sortBy": ".sort(key)",
    "orderBy": ".sort(key)",
    "sort_values": ".sort(key)",
    "mapValues": ".map(lambda entry: (entry[0], fn(entry[1])))",
    "foreach": ".writeTo(Sinks.logger()) or your own sink",
    "saveAsTextFile": ".writeTo(Sinks.files(directory))",
    "select": ".map(lambda row: (row['a'], row['b'])): items are Python values (Sources.dataframe gives rows as dicts)",
    "withColumn": ".map(lambda row: {**row, 'c': value}): items are Python values (Sources.dataframe gives rows as dicts)",
    "cache": ".map(...), .writeTo(...) or any other stage on this one as often as needed: a stage may feed "
             "several, and runs once per job, so there is nothing to cache",
    "persist": ".map(...), .writeTo(...) or any other stage on this one as often as needed: a stage may feed "
               "several, and runs once per job, so there is nothing to persist",
}
"""The PySpark (RDD, DataFrame) and pandas names a batch stage lacks, with what Jet calls it."""


def onAnotherStage(hint: str) -> str:
    """Return ``hint`` with its calls on the object made calls on ``stage``, another stage:
    ``.sort(key)`` becomes ``stage.sort(key)``."""
    return re.sub(r"(^|[\s(])\.(?=\w+\()", r"\1stage.", hint)


KEYED_JET_EQUIVALENTS = {
    **{
        name: ".aggregate(operation) first: a grouped stage emits nothing before it aggregates; then, on the "
              f"stage aggregate returns, {onAnotherStage(hint)}"
        for name, hint in JET_EQUIVALENTS.items()
    },
    "groupBy": ".aggregate(AggregateOperations.counting()) (or another operation): the stage is grouped already",
    "groupByKey": ".aggregate(AggregateOperations.toList())",
    "reduceByKey": ".aggregate(AggregateOperations.reducing(emptyValue, toValueFn, combineFn))",
    "agg": ".aggregate(AggregateOperations.allOf(...))",
    "reduce": ".aggregate(AggregateOperations.reducing(emptyValue, toValueFn, combineFn))",
    "count": ".aggregate(AggregateOperations.counting())",
    "mapValues": ".aggregate(AggregateOperations.toList()).map(lambda entry: (entry[0], fn(entry[1])))",
    "join": ".aggregate2(otherStageWithKey, AggregateOperations.toList(), AggregateOperations.toList()) (the two "
            "stages' items of each key together), or stage.hashJoin(...) on the stage before groupingKey",
}
"""The same on a stage with a grouping key, which aggregates per key already and has nothing else
until it does."""

STREAM_JET_EQUIVALENTS = {
    **JET_EQUIVALENTS,
    "groupBy": ".groupingKey(keyFn).window(WindowDefinition.tumbling(size)).aggregate(AggregateOperations.counting()) "
               "(or another operation): a stream aggregates per window",
    "groupByKey": ".groupingKey(keyFn).window(WindowDefinition.tumbling(size)).aggregate(AggregateOperations.toList())",
    "reduceByKey": ".groupingKey(keyFn).window(WindowDefinition.tumbling(size))"
                   ".aggregate(AggregateOperations.reducing(emptyValue, toValueFn, combineFn))",
    "agg": ".window(WindowDefinition.tumbling(size)).aggregate(AggregateOperations.allOf(...))",
    "reduce": ".window(WindowDefinition.tumbling(size)).aggregate(AggregateOperations.reducing(emptyValue, toValueFn, "
              "combineFn)) or .rollingAggregate(AggregateOperations.reducing(...))",
    "count": ".window(WindowDefinition.tumbling(size)).aggregate(AggregateOperations.counting()) (a count so far: "
             ".rollingAggregate(AggregateOperations.counting()))",
    **dict.fromkeys(
        ("sortBy", "orderBy", "sort_values"),
        ".window(WindowDefinition.tumbling(size)).aggregate(AggregateOperations.sorting(keyFn)): a stream has no end "
        "to sort to, a window has",
    ),
}
"""The same on a stream stage, which aggregates per window and never ends."""

STREAM_SOURCE_JET_EQUIVALENTS = {
    name: ".withTimestamps(timestampFn, allowedLag) (or .withNativeTimestamps(allowedLag), "
          ".withIngestionTimestamps(), .withoutTimestamps()) first: a stream source's stage chooses its event "
          f"time; then, on the stage that returns, {onAnotherStage(hint)}"
    for name, hint in STREAM_JET_EQUIVALENTS.items()
}
"""The same on a stream source's stage, which chooses its timestamps before anything else."""

SINK_JET_EQUIVALENTS = {
    name: f"{onAnotherStage(hint)}, on the stage before writeTo(): the stage writeTo() returns ends its branch"
    for name, hint in JET_EQUIVALENTS.items()
}
"""The same on the stage of a sink, to which nothing attaches."""

PIPELINE_JET_EQUIVALENTS = {
    **{
        name: f".readFrom(source).{name}(...): a pipeline's stages start at a source's stage"
        for name in ("map", "filter", "flatMap", "groupingKey", "aggregate", "peek", "sort", "distinct", "hashJoin")
    },
    **{name: "Jet().newJob(p).join() (jet.newJob(p) to go on while it runs)" for name in ("run", "execute", "submit", "start")},
}
"""The names a Pipeline lacks that users reach for: a stage's operations, and running it."""

AGGREGATE_OPERATIONS_JET_EQUIVALENTS = {
    "count": "AggregateOperations.counting()",
    "sum": "AggregateOperations.summing(valueFn)",
    "avg": "AggregateOperations.averaging(valueFn)",
    "mean": "AggregateOperations.averaging(valueFn)",
    "min": "AggregateOperations.minBy(keyFn)",
    "max": "AggregateOperations.maxBy(keyFn)",
    "first": "AggregateOperations.pickAny()",
    "collect_list": "AggregateOperations.toList()",
    "collect_set": "AggregateOperations.toSet()",
}
"""The names of PySpark's aggregate functions (pyspark.sql.functions), with Jet's operation."""

KINDS_JET_EQUIVALENTS = {
    "BatchStageWithKey": KEYED_JET_EQUIVALENTS,
    "StreamSourceStage": STREAM_SOURCE_JET_EQUIVALENTS,
    "StreamStage": STREAM_JET_EQUIVALENTS,
    "SinkStage": SINK_JET_EQUIVALENTS,
    "Pipeline": PIPELINE_JET_EQUIVALENTS,
    "AggregateOperations": AGGREGATE_OPERATIONS_JET_EQUIVALENTS,
}
"""The hints of each kind of object, by the name of its class (the first of its classes listed
here); any other kind of stage has JET_EQUIVALENTS."""


def equivalentsOf(owner: object) -> dict[str, str]:
    """Return the hints for ``owner``, an object or (for a class of factories) a class."""
    classes = owner.__mro__ if isinstance(owner, type) else type(owner).__mro__
    return next((KINDS_JET_EQUIVALENTS[c.__name__] for c in classes if c.__name__ in KINDS_JET_EQUIVALENTS), JET_EQUIVALENTS)


def habitError(owner: object, name: str) -> AttributeError:
    """Return the AttributeError for ``owner.name``: naming the Jet equivalent of a PySpark or
    pandas habit, or plain (so Python still suggests a near name), worded as Python words it
    for an object or a class."""
    kind = f"type object '{owner.__name__}'" if isinstance(owner, type) else f"'{type(owner).__name__}' object"
    equivalent = None if name.startswith("_") else equivalentsOf(owner).get(name)
    if equivalent is None:
        return AttributeError(f"{kind} has no attribute '{name}'", name=name, obj=owner)
    return AttributeError(f"{kind} has no attribute '{name}': sparkjet speaks Jet; use {equivalent}", name=name, obj=owner)


class WithHabits(type):
    """The metaclass of a class of factories (AggregateOperations) whose missing names get
    habitError's hints."""

    def __getattr__(cls, name: str):
        raise habitError(cls, name)


def notASource(value: object) -> PipelineError:
    """Return the error of ``readFrom(value)`` where ``value`` is no source: what readFrom
    takes, and the source that reads ``value``."""
    source, note = _sourceFor(value)
    return PipelineError(f"{calledAt('readFrom()')} takes a source, not {_kindOf(value)}: write readFrom({source}){note}")


def notASink(value: object, where: str) -> PipelineError:
    """Return the error of ``writeTo(value)`` at ``where`` (a stage, or the user's line) where
    ``value`` is no sink: what writeTo takes, and the sink that was likely meant."""
    sink, note = _sinkFor(value)
    return PipelineError(f"{where}: writeTo() takes a sink, not {_kindOf(value)}: write writeTo({sink}){note}")


def calledAt(call: str) -> str:
    """Return ``call`` and the line of the user's code making it: ``readFrom() at job.py:5``."""
    location = SourceLocation.ofUserCall()
    return call if location is None else f"{call} at {location}"


def _kindOf(value: object) -> str:
    """Return what ``value`` is, with its article: ``a list``, ``an int``, ``a pyspark DataFrame``."""
    kind = type(value)
    name = f"{kind.__module__.partition('.')[0]} {kind.__name__}" if kind.__name__ == "DataFrame" else kind.__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _sourceFor(value: object) -> tuple[str, str]:
    """Return the source that reads ``value``, and a note on what it reads."""
    module, kind = type(value).__module__.partition(".")[0], type(value).__name__
    if (module, kind) == ("pyspark", "DataFrame"):
        return "Sources.dataframe(df)", ", which reads its rows as dicts"
    if (module, kind) == ("pandas", "DataFrame"):
        return "Sources.items(df.to_dict('records'))", ", which reads its rows as dicts"
    if isinstance(value, str):
        return f"Sources.files({value!r})", f" to read the lines of the files in directory {value!r}"
    if isinstance(value, (list, tuple, set, frozenset, range)):
        return f"Sources.items({shorten(value)})", ""
    if hasattr(value, "__iter__"):
        return "Sources.items(items)", ""
    return "Sources.files(directory)", ", Sources.items(items) or another of Sources' sources"


def _sinkFor(value: object) -> tuple[str, str]:
    """Return the sink likely meant by ``value``, and a note on it."""
    if isinstance(value, str):
        return f"Sinks.files({value!r})", (
            f" to write text files in directory {value!r}, or writeTo(Sinks.list({value!r})) to read the items "
            f"with jet.getList({value!r})"
        )
    if isinstance(value, list):
        return "Sinks.list(name)", ", then jet.getList(name) once the job has run"
    return "Sinks.files(directory)", ", Sinks.list(name) or another of Sinks' sinks"
