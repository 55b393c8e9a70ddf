"""sparkjet: Hazelcast Jet's programming model in Python, on Apache Spark.

The user-facing names of the three packages, ``sparkjet.pipeline`` (what a user writes),
``sparkjet.planner`` (planning and the client that runs jobs) and ``sparkjet.coredag`` (the Core
DAG and its processors). This file lives in ``planner/sparkjet/`` because the repository keeps its
three top-level directories; ``pyproject.toml`` maps them under this package.
"""

from sparkjet.coredag import (
    DAG,
    AbstractProcessor,
    DagError,
    Edge,
    Inbox,
    InputError,
    Interrupted,
    JobError,
    Outbox,
    OutputError,
    Partitioner,
    Processor,
    ProcessorContext,
    RoutingPolicy,
    SessionError,
    UserFunctionError,
    Vertex,
)
from sparkjet.pipeline import (
    AggregateOperation,
    AggregateOperations,
    BatchStage,
    BatchStageWithKey,
    JoinClause,
    Pipeline,
    PipelineError,
    ServiceFactories,
    ServiceFactory,
    Sinks,
    Sources,
    wholeItem,
)
from sparkjet.planner import Jet, Job, PlanningError, plan

__all__ = [
    "AbstractProcessor",
    "AggregateOperation",
    "AggregateOperations",
    "BatchStage",
    "BatchStageWithKey",
    "DAG",
    "DagError",
    "Edge",
    "Inbox",
    "InputError",
    "Interrupted",
    "Jet",
    "Job",
    "JobError",
    "JoinClause",
    "Outbox",
    "OutputError",
    "Partitioner",
    "Pipeline",
    "PipelineError",
    "PlanningError",
    "Processor",
    "ProcessorContext",
    "RoutingPolicy",
    "ServiceFactories",
    "ServiceFactory",
    "SessionError",
    "Sinks",
    "Sources",
    "UserFunctionError",
    "Vertex",
    "plan",
    "wholeItem",
]
