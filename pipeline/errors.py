"""The errors of the Pipeline API."""


class PipelineError(ValueError):
    """A pipeline was defined wrongly: names the stage and what to change."""
