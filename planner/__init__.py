"""The planner: turns a Pipeline into a Core DAG, and Jet, the client that runs jobs."""

from sparkjet.planner.errors import PlanningError
from sparkjet.planner.jet import Jet, Job
from sparkjet.planner.planning import PlannedDag, plan

__all__ = ["Jet", "Job", "PlannedDag", "PlanningError", "plan"]
