"""Services a stage's function uses: made once per processor, destroyed when it closes."""

from collections.abc import Callable

import attrs

from sparkjet.coredag.errors import UserFunctionError


def _noDestroy(service: object) -> None:
    """Leave the service as it is."""


@attrs.frozen
class ServiceFactory:
    """Makes a service from the processor's context and destroys it after the last item."""

    createFn: Callable[[object], object]
    destroyFn: Callable[[object], None] = _noDestroy

    def createFor(self, context: object, stageName: str) -> object:
        """Make a processor's service, naming the stage if ``createFn`` raises."""
        try:
            return self.createFn(context)
        except Exception as cause:
            raise UserFunctionError(stageName, "(creating the service)", cause) from cause


class ServiceFactories:
    """Factories of ServiceFactory, with Jet's names."""

    @staticmethod
    def nonSharedService(
        createFn: Callable[[object], object], destroyFn: Callable[[object], None] = _noDestroy
    ) -> ServiceFactory:
        """A service per processor: ``createFn(context)`` makes it, ``destroyFn`` ends it."""
        return ServiceFactory(createFn, destroyFn)

    @staticmethod
    def sharedService(
        createFn: Callable[[object], object], destroyFn: Callable[[object], None] = _noDestroy
    ) -> ServiceFactory:
        """As in Jet, a service the processors could share; on Spark each processor runs in
        its own task, so each gets its own, made and destroyed as ``nonSharedService``."""
        return ServiceFactory(createFn, destroyFn)
