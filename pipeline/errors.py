"""The errors of the Pipeline API."""

from sparkjet.coredag.errors import PipelineError

__all__ = ["DuplicateKeyError", "PipelineError"]


class DuplicateKeyError(PipelineError):
    """toMap without a mergeFn met a second value for a key."""
