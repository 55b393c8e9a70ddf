"""The planner: turns a Pipeline into a Plan (its Core DAG and why), and Jet, the client that runs jobs."""

from sparkjet.planner.errors import PlanningError
from sparkjet.planner.jet import Jet, Job, JobStatus
from sparkjet.planner.planning import Plan, plan

__all__ = ["Jet", "Job", "JobStatus", "Plan", "PlanningError", "plan"]
