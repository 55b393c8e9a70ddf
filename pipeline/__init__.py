"""The Pipeline API: what a user writes."""

from sparkjet.coredag.api.service_factory import ServiceFactories, ServiceFactory
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.assertion import AssertionCompletedException
from sparkjet.coredag.model.simple_event import SimpleEvent
from sparkjet.coredag.model.tags import ItemsByTag, Tag
from sparkjet.coredag.model.window_result import KeyedWindowResult, WindowResult
from sparkjet.pipeline.aggregate_operations import AggregateOperations
from sparkjet.pipeline.assertions import Assertions, AssertionSinks
from sparkjet.pipeline.comparators import ComparatorEx
from sparkjet.pipeline.errors import DuplicateKeyError, PipelineError
from sparkjet.pipeline.functions import wholeItem
from sparkjet.pipeline.pipeline import Pipeline
from sparkjet.pipeline.sinks import Sinks
from sparkjet.pipeline.source_builder import SourceBuilder
from sparkjet.pipeline.sources import Sources
from sparkjet.pipeline.stage import BatchStage, BatchStageWithKey, HashJoinBuilder, SinkStage
from sparkjet.pipeline.stream_source_stage import StreamSourceStage
from sparkjet.pipeline.stream_sources import StreamSource, TestSources
from sparkjet.pipeline.stream_stage import StreamStage
from sparkjet.pipeline.transforms import JoinClause
from sparkjet.pipeline.window_definition import WindowDefinition

__all__ = [
    "AggregateOperation",
    "AggregateOperations",
    "AssertionCompletedException",
    "AssertionSinks",
    "Assertions",
    "BatchStage",
    "DuplicateKeyError",
    "BatchStageWithKey",
    "ComparatorEx",
    "HashJoinBuilder",
    "ItemsByTag",
    "JoinClause",
    "KeyedWindowResult",
    "Pipeline",
    "PipelineError",
    "ServiceFactories",
    "ServiceFactory",
    "SinkStage",
    "Sinks",
    "SourceBuilder",
    "Sources",
    "SimpleEvent",
    "StreamSource",
    "StreamSourceStage",
    "StreamStage",
    "TestSources",
    "Tag",
    "WindowDefinition",
    "WindowResult",
    "wholeItem",
]
