"""The Core DAG: vertices, edges, processors, and their execution on Spark."""

from sparkjet.coredag.api.processor import AbstractProcessor, Inbox, Outbox, Processor, ProcessorContext
from sparkjet.coredag.errors import (
    DagError,
    InputError,
    Interrupted,
    JobError,
    NoSpaceError,
    OutputError,
    ProcessorContractError,
    SessionError,
    SparkjetError,
    StoppedByShutdown,
    UnpicklableItemError,
    UserFunctionError,
    WorkerCrashError,
)
from sparkjet.coredag.model.aggregate_operation import AggregateOperation
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.model.edge import Edge, RoutingPolicy
from sparkjet.coredag.model.edge_config import EdgeConfig
from sparkjet.coredag.model.jet_event import JetEvent
from sparkjet.coredag.model.partitioner import DefaultPartitioner, Partitioner
from sparkjet.coredag.model.timestamp_kind import TimestampKind
from sparkjet.coredag.model.vertex import Vertex

__all__ = [
    "AbstractProcessor",
    "AggregateOperation",
    "DAG",
    "DagError",
    "DefaultPartitioner",
    "Edge",
    "EdgeConfig",
    "Inbox",
    "InputError",
    "Interrupted",
    "JetEvent",
    "JobError",
    "NoSpaceError",
    "Outbox",
    "OutputError",
    "ProcessorContractError",
    "Partitioner",
    "Processor",
    "ProcessorContext",
    "RoutingPolicy",
    "SessionError",
    "SparkjetError",
    "StoppedByShutdown",
    "TimestampKind",
    "UnpicklableItemError",
    "UserFunctionError",
    "Vertex",
    "WorkerCrashError",
]
