"""The errors of the Pipeline API."""


class PipelineError(ValueError):
    """A pipeline was defined wrongly: names the stage and what to change."""


class DuplicateKeyError(PipelineError):
    """toMap without a mergeFn met a second value for a key."""
