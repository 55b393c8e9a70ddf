"""Partitioners: which downstream processor owns a key."""

import abc
import datetime
import enum
import functools
import math
import struct
from decimal import Decimal
from fractions import Fraction

import attrs

from sparkjet.coredag.errors import DagError
from sparkjet.coredag.model.murmur3 import murmur3

_STR_SEED, _BYTES_SEED, _ENCODED_SEED = 0x5354, 0x4259, 0x454E
_NAN = b"F" + struct.pack(">d", math.nan)
_MICROSECOND = datetime.timedelta(microseconds=1)
_KEY_TYPES = (
    "None, bool, int, float, complex, Decimal, Fraction, str, bytes, date, datetime, time, "
    "timedelta, enum members, and tuples and frozensets of them (subclasses too)"
)


class Partitioner(abc.ABC):
    """Maps a partitioning key to a partition in ``range(partitionCount)``; must be picklable."""

    @abc.abstractmethod
    def getPartition(self, key: object, partitionCount: int) -> int:
        """Return the partition of ``key`` among ``partitionCount`` partitions."""


def keyHash(key: object) -> int:
    """Return the unsigned 32-bit MurmurHash3 of ``key``: equal for equal keys, whatever PYTHONHASHSEED is."""
    kind = type(key)
    if kind is str:
        return murmur3(key.encode("utf-8", "surrogatepass"), _STR_SEED, False)
    if kind is bytes:
        return murmur3(key, _BYTES_SEED, False)
    if kind is int or kind is bool:
        return murmur3(b"I%x" % key, _ENCODED_SEED, False)
    if kind is not float and kind is not tuple and key is not None:  # a subclass hashes as its value
        if isinstance(key, str):
            return keyHash(str.__str__(key))
        if isinstance(key, bytes):
            return keyHash(bytes.__bytes__(key))
    try:
        return murmur3(_encode(key), _ENCODED_SEED, False)
    except _Unencodable as error:
        raise DagError(_unencodableMessage(key, error.value)) from None


def _unencodableMessage(key: object, value: object) -> str:
    """Say which key the default partitioner cannot encode, what it can, and what to do."""
    received = f"a key of type '{type(key).__qualname__}'"
    if value is not key:
        received += f" holding a value of type '{type(value).__qualname__}'"
    return (
        f"Cannot partition by {received}: the default partitioner sends keys equal in Python to "
        f"the same partition in every process, so it takes only {_KEY_TYPES}. Make the key "
        "function return one of these, for example a tuple of the object's fields; a Core DAG "
        "edge can take its own Partitioner instead: Edge.partitioned(keyFn, partitioner)"
    )


class _Unencodable(Exception):
    """Raised by ``_encode`` on a value of a type it cannot encode."""

    def __init__(self, value: object) -> None:
        super().__init__(value)
        self.value = value


def _encode(key: object) -> bytes:
    """Encode a key so that keys equal in Python have equal bytes, in every process."""
    if key is None:
        return b"N"
    kind = type(key)
    if kind is int or kind is bool:
        return b"I%x" % key
    if kind is float:
        return _encodeFloat(key)
    if kind is str:
        return b"S" + key.encode("utf-8", "surrogatepass")
    if kind is bytes:
        return b"B" + key
    if kind is tuple:
        return b"T" + _joined([_encode(element) for element in key])
    return _encodeOther(key)


def _joined(parts: list[bytes]) -> bytes:
    """Join encodings so that no two lists of them join to the same bytes."""
    return b"%d:" % len(parts) + b"".join([b"%d:" % len(part) + part for part in parts])


def _encodeFloat(number: float) -> bytes:
    """Encode a float: an integral one as the equal int, the others by their IEEE bytes."""
    if number.is_integer():
        return b"I%x" % int(number)
    return b"F" + struct.pack(">d", number)


def _encodeRational(numerator: int, denominator: int) -> bytes:
    """Encode ``numerator / denominator`` (in lowest terms) as the equal int or float would be."""
    if denominator == 1:
        return b"I%x" % numerator
    try:
        closest = numerator / denominator
    except OverflowError:
        closest = None
    if closest is not None and closest.as_integer_ratio() == (numerator, denominator):
        return _encodeFloat(closest)
    return b"Q%x/%x" % (numerator, denominator)


@functools.singledispatch
def _encodeOther(key: object) -> bytes:
    """Encode a key of a type ``_encode`` has no fast path for (MRO lookup: subclasses too)."""
    raise _Unencodable(key)


@_encodeOther.register
def _encodeIntSubclass(key: int) -> bytes:
    """An int subclass (IntEnum, IntFlag...) equals its int value."""
    return _encode(int.__int__(key))


@_encodeOther.register
def _encodeFloatSubclass(key: float) -> bytes:
    """A float subclass equals its float value."""
    return _encodeFloat(float.__float__(key))


@_encodeOther.register
def _encodeStrSubclass(key: str) -> bytes:
    """A str subclass (a str-mixin Enum...) equals its str value."""
    return _encode(str.__str__(key))


@_encodeOther.register
def _encodeBytesSubclass(key: bytes) -> bytes:
    """A bytes subclass equals its bytes value."""
    return _encode(bytes.__bytes__(key))


@_encodeOther.register
def _encodeTupleSubclass(key: tuple) -> bytes:
    """A tuple subclass (a namedtuple...) equals the tuple of its elements."""
    return _encode(tuple(key))


@_encodeOther.register
def _encodeFraction(key: Fraction) -> bytes:
    """A Fraction equals the int or float of the same value."""
    return _encodeRational(key.numerator, key.denominator)


@_encodeOther.register
def _encodeDecimal(key: Decimal) -> bytes:
    """A Decimal equals the int, float or Fraction of the same value; a NaN only itself."""
    if key.is_nan():
        return _NAN
    if key.is_infinite():
        return _encodeFloat(float(key))
    return _encodeRational(*key.as_integer_ratio())


@_encodeOther.register
def _encodeComplex(key: complex) -> bytes:
    """A complex with no imaginary part equals its real part."""
    if key.imag == 0:
        return _encodeFloat(key.real)
    return b"C" + _joined([_encodeFloat(key.real), _encodeFloat(key.imag)])


@_encodeOther.register
def _encodeFrozenset(key: frozenset) -> bytes:
    """Equal frozensets hold equal elements, in any order: encode them sorted."""
    return b"Z" + _joined(sorted(_encode(element) for element in key))


@_encodeOther.register
def _encodeEnum(key: enum.Enum) -> bytes:
    """A member of a plain Enum or Flag equals only itself: encode its class and name."""
    kind = type(key)
    return b"E" + _encode((kind.__module__, kind.__qualname__, key._name_))


@_encodeOther.register
def _encodeDate(key: datetime.date) -> bytes:
    """A date: its day number."""
    return b"Y%x" % key.toordinal()


@_encodeOther.register
def _encodeDatetime(key: datetime.datetime) -> bytes:
    """An aware datetime: its UTC instant, offset taken at fold=0 as datetime.__hash__ does."""
    micros = (key.toordinal() * 86400 + key.hour * 3600 + key.minute * 60 + key.second) * 10**6
    micros += key.microsecond
    offset = key.replace(fold=0).utcoffset()
    if offset is None:
        return b"Dn%x" % micros
    return b"Da%x" % (micros - offset // _MICROSECOND)


@_encodeOther.register
def _encodeTime(key: datetime.time) -> bytes:
    """An aware time: less its offset's days and seconds (not microseconds), as CPython compares."""
    seconds = key.hour * 3600 + key.minute * 60 + key.second
    offset = key.utcoffset()
    if offset is None:
        return b"Hn%x" % (seconds * 10**6 + key.microsecond)
    seconds -= offset.days * 86400 + offset.seconds
    return b"Ha%x" % (seconds * 10**6 + key.microsecond)


@_encodeOther.register
def _encodeTimedelta(key: datetime.timedelta) -> bytes:
    """A timedelta: its length in microseconds."""
    return b"U%x" % (key // _MICROSECOND)


@attrs.frozen
class DefaultPartitioner(Partitioner):
    """MurmurHash3 over a canonical byte encoding of the key, modulo the partition count."""

    def getPartition(self, key: object, partitionCount: int) -> int:
        """Return ``keyHash(key) % partitionCount``."""
        return keyHash(key) % partitionCount
