"""PySpark and pandas habits on a stage: the error that names the Jet call doing what was meant."""

JET_EQUIVALENTS = {
    "groupBy": "groupingKey(keyFn).aggregate(AggregateOperations.counting()) (or another operation)",
    "groupByKey": "groupingKey(keyFn).aggregate(AggregateOperations.toList())",
    "reduceByKey": "groupingKey(keyFn).aggregate(AggregateOperations.reducing(emptyValue, toValueFn, combineFn))",
    "agg": "aggregate(AggregateOperations.allOf(...)) (per key: groupingKey(keyFn).aggregate(...))",
    "reduce": "aggregate(AggregateOperations.reducing(emptyValue, toValueFn, combineFn))",
    "count": "aggregate(AggregateOperations.counting()) (per key: groupingKey(keyFn).aggregate(AggregateOperations.counting()))",
    "collect": "writeTo(Sinks.list(name)), then jet.getList(name) once the job has run",
    "take": "writeTo(Sinks.list(name)), then jet.getList(name)[:n] once the job has run",
    "show": "peek() (logs the items as they pass) or writeTo(Sinks.logger())",
    "join": "hashJoin(other, JoinClause.onKeys(leftKeyFn, rightKeyFn), mapFn)",
    "union": "merge(other)",
    "unionAll": "merge(other)",
    "sortBy": "sort(key)",
    "orderBy": "sort(key)",
    "sort_values": "sort(key)",
    "mapValues": "map(lambda entry: (entry[0], fn(entry[1])))",
    "foreach": "writeTo(Sinks.logger()) or your own sink",
    "saveAsTextFile": "writeTo(Sinks.files(directory))",
}
"""The PySpark (RDD, DataFrame) and pandas names a stage lacks, with what Jet calls it."""

KEYED_JET_EQUIVALENTS = {
    **JET_EQUIVALENTS,
    "groupBy": "aggregate(AggregateOperations.counting()) (or another operation): the stage is grouped already",
    "groupByKey": "aggregate(AggregateOperations.toList())",
    "reduceByKey": "aggregate(AggregateOperations.reducing(emptyValue, toValueFn, combineFn))",
    "agg": "aggregate(AggregateOperations.allOf(...))",
    "count": "aggregate(AggregateOperations.counting())",
}
"""The same on a stage with a grouping key, which aggregates per key already."""


def habitError(stage: object, name: str, equivalents: dict[str, str] = JET_EQUIVALENTS) -> AttributeError:
    """Return the AttributeError for ``stage.name``: naming the Jet equivalent of a PySpark or
    pandas habit, or plain (so Python still suggests a near name)."""
    kind = type(stage).__name__
    equivalent = equivalents.get(name)
    if equivalent is None:
        return AttributeError(f"'{kind}' object has no attribute '{name}'", name=name, obj=stage)
    return AttributeError(
        f"'{kind}' object has no attribute '{name}': sparkjet speaks Jet; use .{equivalent}", name=name, obj=stage
    )
