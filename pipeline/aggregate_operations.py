"""Factories of common aggregate operations, with Jet's names and empty results: one class,
``AggregateOperations``, as Jet's, over the modules of each family (``aggregate_arithmetic``,
``aggregate_picking``, ``aggregate_collecting``, ``aggregate_adapting``,
``aggregate_composition``).

Every operation returns the accumulator from accumulate and combine, mutates only the left
argument of combine, and exports a value that shares no mutable state with the accumulator.
"""

from sparkjet.pipeline.aggregate_adapting import filtering, flatMapping, mapping, reducing
from sparkjet.pipeline.aggregate_arithmetic import averaging, counting, linearTrend, summing
from sparkjet.pipeline.aggregate_collecting import (
    concatenating,
    groupingBy,
    sorting,
    toCollection,
    toList,
    toMap,
    toSet,
)
from sparkjet.pipeline.aggregate_composition import (
    AllOfAggregationBuilder,
    CoAggregateOperationBuilder,
    aggregateOperation2,
    aggregateOperation3,
    allOf,
    allOfBuilder,
    coAggregateOperationBuilder,
)
from sparkjet.pipeline.aggregate_picking import bottomN, maxBy, minBy, pickAny, topN
from sparkjet.pipeline.errors import DuplicateKeyError
from sparkjet.pipeline.habits import WithHabits

__all__ = ["AggregateOperations", "AllOfAggregationBuilder", "CoAggregateOperationBuilder", "DuplicateKeyError"]


class AggregateOperations(metaclass=WithHabits):
    """Factories of AggregateOperation."""

    counting = staticmethod(counting)
    summing = staticmethod(summing)
    averaging = staticmethod(averaging)
    minBy = staticmethod(minBy)
    maxBy = staticmethod(maxBy)
    topN = staticmethod(topN)
    bottomN = staticmethod(bottomN)
    toList = staticmethod(toList)
    toSet = staticmethod(toSet)
    toMap = staticmethod(toMap)
    toCollection = staticmethod(toCollection)
    groupingBy = staticmethod(groupingBy)
    mapping = staticmethod(mapping)
    filtering = staticmethod(filtering)
    flatMapping = staticmethod(flatMapping)
    reducing = staticmethod(reducing)
    pickAny = staticmethod(pickAny)
    sorting = staticmethod(sorting)
    concatenating = staticmethod(concatenating)
    linearTrend = staticmethod(linearTrend)
    allOf = staticmethod(allOf)
    allOfBuilder = staticmethod(allOfBuilder)
    aggregateOperation2 = staticmethod(aggregateOperation2)
    aggregateOperation3 = staticmethod(aggregateOperation3)
    coAggregateOperationBuilder = staticmethod(coAggregateOperationBuilder)
