"""The errors of the planner."""


class PlanningError(ValueError):
    """A pipeline cannot be turned into a Core DAG as it is."""
