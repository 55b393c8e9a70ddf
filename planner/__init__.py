"""The planner: turns a Pipeline into a Core DAG, and Jet, the client that runs jobs."""

from planner.errors import PlanningError
from planner.jet import Jet, Job
from planner.planning import PlannedDag, plan

__all__ = ["Jet", "Job", "PlannedDag", "PlanningError", "plan"]
