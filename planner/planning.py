"""The planner: a pipeline becomes a Core DAG through pure phases run in order."""

import toolz

from coredag.dag import DAG
from pipeline.naming import makeNamesUnique
from pipeline.pipeline import Pipeline
from planner.fusion import fuseStatelessChains
from planner.leakage import rejectDanglingStages
from planner.lowering import lowerToDag

PHASES = (makeNamesUnique, rejectDanglingStages, fuseStatelessChains, lowerToDag)


def plan(pipeline: Pipeline) -> DAG:
    """Return the Core DAG that runs ``pipeline``; pure: no JVM starts."""
    return toolz.pipe(pipeline.graph(), *PHASES)
