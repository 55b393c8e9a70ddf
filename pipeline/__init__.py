"""The Pipeline API: what a user writes."""

from coredag.aggregate_operation import AggregateOperation
from pipeline.aggregate_operations import AggregateOperations
from pipeline.errors import DuplicateKeyError, PipelineError
from pipeline.functions import wholeItem
from pipeline.pipeline import Pipeline
from pipeline.sinks import Sinks
from pipeline.sources import Sources
from coredag.service_factory import ServiceFactories, ServiceFactory
from pipeline.stage import BatchStage, BatchStageWithKey, HashJoinBuilder, SinkStage
from pipeline.transforms import JoinClause

__all__ = [
    "AggregateOperation",
    "AggregateOperations",
    "BatchStage",
    "DuplicateKeyError",
    "BatchStageWithKey",
    "HashJoinBuilder",
    "JoinClause",
    "Pipeline",
    "PipelineError",
    "ServiceFactories",
    "ServiceFactory",
    "SinkStage",
    "Sinks",
    "Sources",
    "wholeItem",
]
