"""py-spy's raw output summarized: samples per kind of process, the Python workers' functions."""

import re
from collections import Counter
from collections.abc import Iterable

import attrs

DAEMON_MODULES = ("pyspark.daemon", "sparkjet.coredag.runtime.worker_daemon")  # PySpark's, and sparkjet's sessions'
DRIVER, DAEMON, WORKERS, OTHER_PROCESS = "driver", "PySpark daemon", "Python workers", "other"
PROCESS_KINDS = (DRIVER, DAEMON, WORKERS, OTHER_PROCESS)
USER, SPARKJET, PYSPARK, STDLIB, OTHER = (
    "user's code",
    "sparkjet",
    "PySpark",
    "standard library",
    "other",
)
ORIGINS = (
    ("benchmarks/words.py", USER),
    ("benchmarks/variants/", USER),
    ("coredag/", SPARKJET),
    ("pipeline/", SPARKJET),
    ("planner/", SPARKJET),
    ("pyspark/", PYSPARK),
    ("py4j/", PYSPARK),
)
PACKAGE_ROOTS = (".zip/", "/site-packages/", "/dist-packages/")
PROCESS = re.compile(r'process (\d+):"([^"]*)"(?:;|$)')
FRAME = re.compile(r"^(?P<function>.*) \((?P<path>.*):\d+\)$")
TOP_SELF = 12
TOP_TOTAL = 20  # the first few are the worker's entry, on nearly every sample


@attrs.frozen
class Process:
    """A process in a sampled stack's ancestry: its id and command line."""

    pid: int
    command: str


@attrs.frozen
class Frame:
    """One Python frame: its function and its file as py-spy names them, the line left out."""

    function: str
    path: str


@attrs.frozen
class Stack:
    """One raw line: the sampled process last after its ancestors, its frames leaf last, samples."""

    processes: tuple[Process, ...]
    frames: tuple[Frame, ...]
    count: int


@attrs.frozen
class Roots:
    """Where the sampled code lives on this machine: the project, the standard library."""

    project: str
    stdlib: str


@attrs.frozen
class Function:
    """A function, its file from its package on, whose code it is, and its samples."""

    name: str
    path: str
    origin: str
    samples: int


@attrs.frozen
class ProcessShare:
    """The samples of one kind of process, and how many such processes were sampled."""

    kind: str
    processes: int
    samples: int


@attrs.frozen
class Summary:
    """All samples by kind of process; the Python workers' samples by origin and by function."""

    samples: int
    processes: tuple[ProcessShare, ...]
    workerSamples: int
    byOrigin: tuple[tuple[str, int], ...]
    bySelf: tuple[Function, ...]
    byTotal: tuple[Function, ...]


def parseFrame(text: str) -> Frame:
    """Return ``function (path:line)`` as a frame; text of another shape as a function alone."""
    match = FRAME.match(text)
    return Frame(match["function"], match["path"]) if match else Frame(text, "")


def parseLine(line: str) -> Stack:
    """Return a raw line, ``process A:"cmd";process B:"cmd";frame;…;leaf COUNT``, as a stack."""
    body, _, count = line.rpartition(" ")
    processes, position = [], 0
    while match := PROCESS.match(body, position):
        processes.append(Process(int(match[1]), match[2]))
        position = match.end()
    frames = tuple(parseFrame(text) for text in body[position:].split(";") if text)
    return Stack(tuple(processes), frames, int(count))


def parseRaw(text: str) -> list[Stack]:
    """Return every stack of py-spy's raw output."""
    return [parseLine(line) for line in text.splitlines() if line.strip()]


def isDaemon(process: Process) -> bool:
    """Return whether ``process`` runs a PySpark daemon (or is a worker it forked)."""
    return any(f"-m {module}" in process.command for module in DAEMON_MODULES)


def processKind(processes: tuple[Process, ...]) -> str:
    """Return what the sampled process (the last) is: a daemon's fork is a Python worker."""
    *ancestors, sampled = processes
    if isDaemon(sampled):
        return WORKERS if ancestors and isDaemon(ancestors[-1]) else DAEMON
    return OTHER_PROCESS if ancestors else DRIVER


def shortPath(path: str, roots: Roots) -> str:
    """Return ``path`` from its package on: in a zip, in site-packages, the project, the stdlib."""
    for marker in PACKAGE_ROOTS:
        if marker in path:
            return path.rsplit(marker, 1)[1]
    for root in (roots.project, roots.stdlib):
        if path.startswith(root + "/"):
            return path[len(root) + 1 :]
    return path


def isStandardLibrary(path: str, roots: Roots) -> bool:
    """Return whether ``path`` is the standard library's: frozen, or in its folder, unpackaged."""
    packaged = any(marker in path for marker in PACKAGE_ROOTS)
    return path.startswith("<frozen ") or (path.startswith(roots.stdlib + "/") and not packaged)


def origin(path: str, roots: Roots) -> str:
    """Return whose code ``path`` is: the user's, sparkjet's, PySpark's, the stdlib's, other."""
    if isStandardLibrary(path, roots):
        return STDLIB
    short = shortPath(path, roots)
    return next((label for prefix, label in ORIGINS if short.startswith(prefix)), OTHER)


def functionKey(frame: Frame, roots: Roots) -> tuple[str, str, str]:
    """Return the frame's function, its file from its package on, and its origin."""
    return frame.function, shortPath(frame.path, roots), origin(frame.path, roots)


def selfSamples(stacks: Iterable[Stack], roots: Roots) -> Counter:
    """Count the samples each function was the leaf of: its own code and the C code it called."""
    counts: Counter = Counter()
    for stack in stacks:
        if stack.frames:
            counts[functionKey(stack.frames[-1], roots)] += stack.count
    return counts


def totalSamples(stacks: Iterable[Stack], roots: Roots) -> Counter:
    """Count the samples each function was anywhere on the stack in, once per stack."""
    counts: Counter = Counter()
    for stack in stacks:
        for key in {functionKey(frame, roots) for frame in stack.frames}:
            counts[key] += stack.count
    return counts


def mostFirst(counts: Counter) -> list[tuple]:
    """Return the counted keys and their counts, most first, ties in the keys' order."""
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def topFunctions(counts: Counter, top: int) -> tuple[Function, ...]:
    """Return the ``top`` functions with the most samples, most first."""
    return tuple(Function(*key, samples) for key, samples in mostFirst(counts)[:top])


def processShares(stacks: list[Stack]) -> tuple[ProcessShare, ...]:
    """Return the samples and the processes of each kind sampled, in ``PROCESS_KINDS`` order."""
    samples: Counter = Counter()
    pids: dict[str, set[int]] = {}
    for stack in stacks:
        kind = processKind(stack.processes)
        samples[kind] += stack.count
        pids.setdefault(kind, set()).add(stack.processes[-1].pid)
    return tuple(
        ProcessShare(kind, len(pids[kind]), samples[kind]) for kind in PROCESS_KINDS if kind in pids
    )


def originShares(selfCounts: Counter) -> tuple[tuple[str, int], ...]:
    """Return the self samples of each origin, most first."""
    byOrigin: Counter = Counter()
    for (_, _, label), samples in selfCounts.items():
        byOrigin[label] += samples
    return tuple(mostFirst(byOrigin))


def summarize(text: str, roots: Roots) -> Summary:
    """Summarize py-spy's raw output: processes by kind, the Python workers' top functions."""
    stacks = [stack for stack in parseRaw(text) if stack.processes]
    workers = [stack for stack in stacks if processKind(stack.processes) == WORKERS]
    selfCounts = selfSamples(workers, roots)
    return Summary(
        samples=sum(stack.count for stack in stacks),
        processes=processShares(stacks),
        workerSamples=sum(stack.count for stack in workers),
        byOrigin=originShares(selfCounts),
        bySelf=topFunctions(selfCounts, TOP_SELF),
        byTotal=topFunctions(totalSamples(workers, roots), TOP_TOTAL),
    )
