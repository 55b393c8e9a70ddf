"""The submission routes, measured by a real trace: a tiny batch job's, from ``Jet.newJob`` to
``Engine.runBatch``, and a tiny stream job's, from ``Jet.newJob`` to the first micro-batch handed
to the engine (``Engine.runMicroBatch``; ``executeDag`` in trees before the engine seam).

A profile hook records every call of sparkjet's own code (pipeline/, planner/, coredag/) until the
target is called. The *spine* is the chain of sparkjet frames on the call stack that reaches the
target, followed across the thread hand-offs (a job thread's ``submit``, a ``Thread``, the
stream query's ``foreachBatch`` callback) back to ``newJob``. The *route* adds what a reader of
the spine meets: each spine function's direct sparkjet callees before its next step down.

- stops: the distinct functions on the route;
- files: the distinct files they are in;
- climbs back: on the route's functions in call order, each move into a file the route has
  already left once (a return to the caller is read on, not counted);
- crossings: moves from planner/ to coredag/runtime/ and back, other layers passing through.

Module and class bodies run by an import on the way are not stops; they are listed apart.

Run: ``python tests/route.py [tree]`` (re-runs itself under ``<tree>/.venv/bin/python``), or
``batchRoute(jet)`` and ``streamRoute(jet, checkpoints)`` from a test."""

import collections
import concurrent.futures
import functools
import inspect
import os
import pathlib
import sys
import tempfile
import threading

LAYERS = ("planner/", "coredag/runtime/")
INLINE = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")
"""Frames read as part of the function around them."""
TARGETS = {"batch": ("runBatch", "executeDag"), "stream": ("runMicroBatch", "executeDag")}


class Trace:
    """The sparkjet calls one job makes from ``newJob`` until it first calls a target function."""

    def __init__(self, root: pathlib.Path, targets: tuple[str, ...]) -> None:
        self.roots = tuple(str(root / package) + os.sep for package in ("pipeline", "planner", "coredag"))
        self.root = str(root) + os.sep
        self.targets = targets
        self.calls: list[dict] = []
        """Each sparkjet call: its file, its function, the call it came from (``up``) and when it
        left that call (``since``: the call's own number, or that of its thread's hand-off)."""
        self.target: int | None = None
        self._live: dict[int, int] = {}
        self._ours: dict[object, bool] = {}
        self._local = threading.local()
        self._lock = threading.Lock()

    def _isOurs(self, code) -> bool:
        """Return whether ``code`` is a function of sparkjet's (a comprehension is its function's)."""
        ours = self._ours.get(code)
        if ours is None:
            ours = self._ours[code] = code.co_filename.startswith(self.roots) and code.co_name not in INLINE
        return ours

    def _innermost(self, frame) -> tuple[int | None, int | None]:
        """Return the call of the innermost sparkjet frame at or above ``frame``, else the call
        this thread was handed off from and the moment of the hand-off."""
        while frame is not None:
            call = self._live.get(id(frame))
            if call is not None:
                return call, None
            frame = frame.f_back
        return getattr(self._local, "origin", None), getattr(self._local, "handoff", None)

    def profile(self, frame, event, arg) -> None:
        if self.target is not None or event not in ("call", "return") or not self._isOurs(frame.f_code):
            return
        with self._lock:
            if event == "return":
                self._live.pop(id(frame), None)
                return
            code = frame.f_code
            call = len(self.calls)
            up, handoff = self._innermost(frame.f_back)
            self.calls.append({
                "file": code.co_filename[len(self.root):], "function": code.co_qualname,
                "up": up, "since": call if handoff is None else handoff,
                "body": not code.co_flags & inspect.CO_NEWLOCALS,
            })
            self._live[id(frame)] = call
            if code.co_name in self.targets and "/runtime/stream/" not in code.co_filename:
                self.target = call

    def handedOff(self, fn):
        """Return ``fn`` run under this trace in another thread, coming from the caller's route."""
        origin, _ = self._innermost(sys._getframe(2))
        with self._lock:
            handoff = len(self.calls)

        @functools.wraps(fn)
        def traced(*args, **kwargs):
            self._local.origin = origin
            self._local.handoff = handoff
            previous = sys.getprofile()
            sys.setprofile(self.profile)
            try:
                return fn(*args, **kwargs)
            finally:
                sys.setprofile(previous)
                self._local.origin = None

        return traced

    def route(self) -> dict:
        """Return the spine, the route walked in call order, and their figures."""
        if self.target is None:
            raise RuntimeError(f"the job never called {' or '.join(self.targets)}")
        spine = [self.target]
        while self.calls[spine[-1]]["up"] is not None:
            spine.append(self.calls[spine[-1]]["up"])
        spine.reverse()
        children = collections.defaultdict(list)
        for number, call in enumerate(self.calls):
            if call["up"] is not None:
                children[call["up"]].append(number)
        walk, homes = [], []
        for step, call in enumerate(spine):
            walk.append(call)
            homes.append(self.calls[spine[step - 1]]["file"] if step else None)
            following = spine[step + 1] if step + 1 < len(spine) else None
            for child in children[call]:
                if following is not None and child >= self.calls[following]["since"]:
                    break
                if not self.calls[child]["body"]:
                    walk.append(child)
                    homes.append(self.calls[call]["file"])
        return {
            "spine": [self._named(call) for call in spine],
            "walk": [self._named(call) for call in walk],
            "spineFigures": figures([self._named(call) for call in spine]),
            "figures": figures([self._named(call) for call in walk], homes),
            "called": sorted({self._named(call) for call in range(len(self.calls)) if not self.calls[call]["body"]}),
            "imported": sorted({self.calls[call]["file"] for call in range(len(self.calls)) if self.calls[call]["body"]}),
        }

    def _named(self, call: int) -> tuple[str, str]:
        return self.calls[call]["file"], self.calls[call]["function"]


def figures(walk: list[tuple[str, str]], homes: list[str | None] | None = None) -> dict:
    """Return the stops, files, climbs back and planner/runtime crossings of a walk; ``homes``:
    for each step, the file of the function that called it (a step there is the caller read on,
    not a climb back)."""
    files = [file for file, _ in walk]
    homes = homes or [None] * len(walk)
    moves = [number for number in range(len(files)) if number == 0 or files[number - 1] != files[number]]
    entered = [files[number] for number in moves]
    climbs = sum(
        1 for place, number in enumerate(moves) if files[number] in entered[:place] and files[number] != homes[number]
    )
    layers = [layer for layer in map(layerOf, entered) if layer is not None]
    moves = [(a, b) for a, b in zip(layers, layers[1:]) if a != b]
    return {
        "stops": len(set(walk)),
        "files": len(set(files)),
        "climbs": climbs,
        "toRuntime": moves.count(("planner/", "coredag/runtime/")),
        "toPlanner": moves.count(("coredag/runtime/", "planner/")),
        "entries": dict(collections.Counter(entered).most_common()),
    }


def layerOf(file: str) -> str | None:
    return next((layer for layer in LAYERS if file.startswith(layer)), None)


def traced(root: pathlib.Path, targets: tuple[str, ...], submit) -> Trace:
    """Run ``submit()`` (which submits and joins one job) under a new trace."""
    from pyspark.sql.streaming import DataStreamWriter

    trace = Trace(root, targets)
    patched = {
        (concurrent.futures.ThreadPoolExecutor, "submit"):
            lambda original: lambda self, fn, *a, **k: original(self, trace.handedOff(fn), *a, **k),
        (DataStreamWriter, "foreachBatch"):
            lambda original: lambda self, fn: original(self, trace.handedOff(fn)),
        (threading.Thread, "start"):
            lambda original: lambda self: (setattr(self, "run", trace.handedOff(self.run)), original(self))[1],
    }
    originals = {key: getattr(*key) for key in patched}
    for (owner, name), patch in patched.items():
        setattr(owner, name, patch(originals[(owner, name)]))
    previous = sys.getprofile()
    sys.setprofile(trace.profile)
    try:
        submit()
    finally:
        sys.setprofile(previous)
        for (owner, name), original in originals.items():
            setattr(owner, name, original)
    return trace


def batchRoute(jet) -> dict:
    """Return the route of a tiny batch job run by ``jet`` (see ``Trace.route``)."""
    from sparkjet import Pipeline, Sinks, TestSources

    batch = Pipeline.create()
    batch.readFrom(TestSources.items([1, 2, 3])).map(lambda x: x * 2).writeTo(Sinks.list("route-batch"))
    return traced(treeOf(), TARGETS["batch"], lambda: jet.newJob(batch).join()).route()


def streamRoute(jet, checkpoints: str) -> dict:
    """Return the route of a tiny exactly-once stream job run by ``jet``, its checkpoint under
    ``checkpoints`` (see ``Trace.route``)."""
    from sparkjet import JobConfig, Pipeline, ProcessingGuarantee, Sinks, TestSources

    stream = Pipeline.create()
    (stream.readFrom(TestSources.finiteStream([(0, "a"), (1, "b")])).withNativeTimestamps(0)
        .map(str.upper).writeTo(Sinks.list("route-stream")))
    config = (JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
              .setCheckpointLocation(checkpoints))
    return traced(treeOf(), TARGETS["stream"], lambda: jet.newJob(stream, config).join()).route()


def treeOf() -> pathlib.Path:
    """Return the tree the imported sparkjet comes from."""
    import sparkjet.planner

    return pathlib.Path(sparkjet.planner.__file__).resolve().parent.parent


def report(kind: str, route: dict) -> str:
    """Return the route of ``kind`` as lines: the walk, the spine and the figures."""
    lines = [f"== {kind} route, in call order (spine marked *)"]
    spine = set(route["spine"])
    lines += [f"  {'*' if stop in spine else ' '} {stop[0]}: {stop[1]}" for stop in route["walk"]]
    for name, figure in (("route", route["figures"]), ("spine", route["spineFigures"])):
        lines.append(
            f"  {name}: {figure['stops']} stops in {figure['files']} files, {figure['climbs']} climbs back, "
            f"planner->runtime {figure['toRuntime']}, runtime->planner {figure['toPlanner']}; "
            f"entries {figure['entries']}"
        )
    lines.append(
        f"  whole call tree before the target: {len(route['called'])} functions in "
        f"{len({file for file, _ in route['called']})} files"
    )
    functions = [f"{file}:{function}" for file, function in route["called"] if "runtime/stream/" in file]
    modules = [file for file in route["imported"] if "runtime/stream/" in file]
    lines.append(f"  runtime/stream/ functions called at any depth: {len(functions)} {functions[:6] if functions else ''}")
    lines.append(f"  runtime/stream/ modules (or classes) first loaded on the way: {modules or 'none'}")
    return "\n".join(lines)


def main() -> None:
    tree = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    python = tree / ".venv" / "bin" / "python"
    if os.environ.get("SPARKJET_ROUTE_CHILD") != str(tree):
        os.environ.update(SPARKJET_ROUTE_CHILD=str(tree), PYSPARK_PYTHON=str(python))
        os.chdir(tree)
        os.execv(python, [str(python), str(pathlib.Path(__file__).resolve()), str(tree)])
    from sparkjet import Jet

    jet = Jet(master="local[2]", ui=False)
    try:
        with tempfile.TemporaryDirectory() as checkpoints:
            jet.spark()
            routes = {"batch": batchRoute(jet), "stream": streamRoute(jet, checkpoints)}
    finally:
        jet.shutdown()
    print(f"tree {tree}")
    for kind, route in routes.items():
        print(report(kind, route))


if __name__ == "__main__":
    main()
