"""The errors of the planner."""

from sparkjet.coredag.errors import SparkjetError


class PlanningError(SparkjetError, ValueError):
    """A pipeline cannot be turned into a Core DAG as it is."""
