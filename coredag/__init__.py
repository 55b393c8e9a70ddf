"""The Core DAG: vertices, edges, processors, and their execution on Spark."""

from coredag.aggregate_operation import AggregateOperation
from coredag.dag import DAG
from coredag.edge import Edge, RoutingPolicy
from coredag.edge_config import EdgeConfig
from coredag.errors import (
    DagError,
    InputError,
    Interrupted,
    JobError,
    OutputError,
    SessionError,
    UnpicklableItemError,
    UserFunctionError,
    WorkerCrashError,
)
from coredag.partitioner import DefaultPartitioner, Partitioner
from coredag.processor import (
    AbstractProcessor,
    Inbox,
    Outbox,
    Processor,
    ProcessorContext,
)
from coredag.vertex import Vertex

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
    "JobError",
    "Outbox",
    "OutputError",
    "Partitioner",
    "Processor",
    "ProcessorContext",
    "RoutingPolicy",
    "SessionError",
    "UnpicklableItemError",
    "UserFunctionError",
    "Vertex",
    "WorkerCrashError",
]
