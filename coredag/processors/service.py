"""Stages whose function uses a service made once per processor and destroyed at the end."""

import itertools
from collections.abc import Callable, Iterable, Iterator

import attrs

from sparkjet.coredag.api.processor import AbstractProcessor, ProcessorContext
from sparkjet.coredag.api.service_factory import ServiceFactory
from sparkjet.coredag.api.standard import BatchFunction, StandardProcessorSupplier
from sparkjet.coredag.errors import UserFunctionError, shorten

_KINDS = ("map", "filter", "flatMap")


@attrs.frozen
class ServiceP(StandardProcessorSupplier):
    """Runs ``fn(service, item)`` as a map, filter or flat-map, with a per-processor service
    (keyed: ``fn(service, key, item)``, each key's items on one processor)."""

    kind: str = attrs.field(validator=attrs.validators.in_(_KINDS))
    serviceFactory: ServiceFactory
    fn: Callable
    stageName: str
    keyFn: Callable | None = None

    def outputs(self, service: object, item: object) -> list:
        """Return what the stage emits for ``item``: ``fn(service, item)``, or with a ``keyFn``
        ``fn(service, key, item)``."""
        try:
            result = self.fn(service, item) if self.keyFn is None else self.fn(service, self.keyFn(item), item)
            if self.kind == "flatMap":
                return list(result)
        except Exception as cause:
            raise UserFunctionError(self.stageName, shorten(item), cause) from cause
        if self.kind == "filter":
            return [item] if result else []
        return [] if result is None else [result]

    def createService(self, context: ProcessorContext) -> object:
        """Make this processor's service."""
        return self.serviceFactory.createFor(context, self.stageName)

    def batchFunction(self, context: ProcessorContext) -> BatchFunction:
        """Return a loop over the batches that makes the service first and destroys it last."""
        return lambda batches: self._overBatches(context, batches)

    def _overBatches(self, context: ProcessorContext, batches: Iterable[list]) -> Iterator[list]:
        service = self.createService(context)
        try:
            for batch in batches:
                outputs = list(itertools.chain.from_iterable(self.outputs(service, item) for item in batch))
                if outputs:
                    yield outputs
        finally:
            if service is not None:
                self.serviceFactory.destroyFn(service)

    def __call__(self) -> "ServiceProcessor":
        return ServiceProcessor(self)


class ServiceProcessor(AbstractProcessor):
    """Makes the service in ``init`` and destroys it in ``close``."""

    def __init__(self, supplier: ServiceP) -> None:
        self._supplier = supplier
        self._service = None
        self._flatMapper = self.flatMapper(lambda item: supplier.outputs(self._service, item))

    def onInit(self, context: ProcessorContext) -> None:
        """Make the service."""
        self._service = self._supplier.createService(context)

    def tryProcess0(self, item) -> bool:
        """Emit the stage's output for ``item``."""
        return self._flatMapper.tryProcess(item)

    def close(self) -> None:
        """Destroy the service, if it was made."""
        if self._service is not None:
            self._supplier.serviceFactory.destroyFn(self._service)
