"""Shipping sparkjet to executors that have nothing installed, as ``--py-files`` would: one zip of
sparkjet and its pure-Python dependencies, cached by a hash of its content, with the extension
modules of its C dependencies beside it (docs/internals/core-dag-on-spark.md, "Shipping"); to a
Spark Connect server, the same files as the session's artifacts."""

import hashlib
import importlib
import importlib.machinery
import importlib.metadata
import io
import os
import pathlib
import re
import sys
import tempfile
import threading
import types
import weakref
import zipfile

import attrs
from pyspark import SparkContext

DISTRIBUTION = "sparkjet"
PACKAGE = "sparkjet"
PROVIDED_BY_SPARK = frozenset({"pyspark", "py4j"})
"""Distributions Spark gives every Python worker (its bundled pyspark.zip and py4j zip)."""

_EXTENSIONS = tuple(importlib.machinery.EXTENSION_SUFFIXES) + (".so", ".pyd")
_SKIPPED_PARTS = frozenset({"__pycache__"})
_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


@attrs.frozen
class Bundle:
    """What a session ships: the zip (its file name is also its place on a worker's path), the
    extension modules that travel beside it and the top-level packages the zip holds."""

    zipPath: pathlib.Path
    extensions: tuple[pathlib.Path, ...]
    packages: frozenset[str]

    @property
    def shipsSparkjet(self) -> bool:
        """Whether the zip holds sparkjet itself (not when it was imported from a zip already)."""
        return PACKAGE in self.packages


_bundle: Bundle | None = None
_shippedTo: weakref.WeakSet = weakref.WeakSet()
_shippedToSessions: set[str] = set()
"""The ids of the Spark Connect sessions given the bundle (a server keeps artifacts per session)."""
_lock = threading.Lock()


def shipsTo(master: str) -> bool:
    """Whether a session on ``master`` gets sparkjet shipped: every master but a local one,
    whose Python workers run on this machine and import what this process imports."""
    return not master.strip().startswith("local")


def bundle() -> Bundle:
    """Return this process's bundle, building its zip once (or finding it in the cache)."""
    global _bundle
    with _lock:
        if _bundle is None:
            _bundle = buildBundle(cacheDirectory())
        return _bundle


def cacheDirectory() -> pathlib.Path:
    """Where zips are kept: ``$SPARKJET_CACHE``, else ``$XDG_CACHE_HOME/sparkjet`` (``~/.cache``)."""
    configured = os.environ.get("SPARKJET_CACHE")
    if configured:
        return pathlib.Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "sparkjet" / "shipped"


def buildBundle(directory: pathlib.Path) -> Bundle:
    """Zip sparkjet and its pure-Python dependencies into ``directory`` (unless a zip of the
    same content is there); list the extension modules of the others."""
    files: dict[str, pathlib.Path] = {}
    packages: set[str] = set()
    extensions: list[pathlib.Path] = []
    for name in [PACKAGE] + [top for dist in dependencies(DISTRIBUTION) for top in pureTopLevel(dist, extensions)]:
        found = moduleFiles(name)
        if found:
            files.update(found)
            packages.add(name)
    contents = {name: files[name].read_bytes() for name in sorted(files)}
    zipPath = directory / f"sparkjet-{contentHash(contents)}.zip"
    if not zipPath.is_file():
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, suffix=".part", delete=False) as partial:
            partial.write(zipBytes(contents))
        os.replace(partial.name, zipPath)
    return Bundle(zipPath, tuple(extensions), frozenset(packages))


def dependencies(distribution: str) -> list[importlib.metadata.Distribution]:
    """Return the installed distributions ``distribution`` needs, transitively, but Spark's own
    and those only an extra asks for."""
    seen: dict[str, importlib.metadata.Distribution] = {}
    pending = [distribution]
    while pending:
        try:
            requirements = importlib.metadata.requires(pending.pop()) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for requirement in requirements:
            name, _, marker = requirement.partition(";")
            match = _REQUIREMENT_NAME.match(name)
            key = match.group(1).lower().replace("_", "-") if match else ""
            if not key or "extra" in marker or key in PROVIDED_BY_SPARK or key in seen:
                continue
            try:
                seen[key] = importlib.metadata.distribution(key)
            except importlib.metadata.PackageNotFoundError:
                continue
            pending.append(key)
    return list(seen.values())


def pureTopLevel(distribution: importlib.metadata.Distribution, extensions: list[pathlib.Path]) -> list[str]:
    """Return the top-level import names of a pure-Python ``distribution``; for one with C
    extensions, none, appending its single-file extension modules to ``extensions``."""
    files = [path for path in distribution.files or [] if _isInstalledModuleFile(path)]
    binary = [path for path in files if str(path).endswith(_EXTENSIONS)]
    if binary:
        extensions.extend(pathlib.Path(distribution.locate_file(path)) for path in binary if len(path.parts) == 1)
        return []
    names = {path.parts[0] if len(path.parts) > 1 else path.stem for path in files if path.suffix == ".py" or len(path.parts) > 1}
    return sorted(names)


def _isInstalledModuleFile(path) -> bool:
    first = path.parts[0] if path.parts else ""
    return bool(first) and first != ".." and not first.endswith((".dist-info", ".egg-info", ".data")) and path.suffix != ".pth"


def moduleFiles(name: str) -> dict[str, pathlib.Path]:
    """Return the files of top-level module or package ``name`` by their name in a zip; none
    when it is not imported from plain files (a zip or egg someone else shipped)."""
    module = importlib.import_module(name)
    origin = module.__spec__.origin if module.__spec__ is not None else None
    if not origin or not os.path.isfile(origin):
        return {}
    if module.__spec__.submodule_search_locations is None:
        return {os.path.basename(origin): pathlib.Path(origin)}
    loaded = [
        (other, os.path.realpath(next(iter(module.__path__))))
        for other, module in list(sys.modules.items())
        if (other == name or other.startswith(name + ".")) and _isPackage(module)
    ]
    packages: dict[str, str] = {}  # a directory imported under two names (sparkjet.planner.sparkjet is sparkjet) ships once
    doubles: set[str] = set()
    for other, directory in sorted(loaded, key=lambda pair: (pair[0].count("."), pair[0])):
        if directory in packages.values() or any(other.startswith(double + ".") for double in doubles):
            doubles.add(other)
        else:
            packages[other] = directory
    files: dict[str, pathlib.Path] = {}
    elsewhere = set(packages.values())
    for package, directory in sorted(packages.items()):
        files.update(_directoryFiles(pathlib.Path(directory), package.replace(".", "/"), elsewhere - {directory}))
    return files


def _isPackage(loaded: object) -> bool:
    """Return whether ``loaded`` (any entry of ``sys.modules``) is a package imported from directories."""
    spec = loaded.__spec__ if isinstance(loaded, types.ModuleType) else None
    return spec is not None and bool(spec.submodule_search_locations)


def _directoryFiles(directory: pathlib.Path, prefix: str, elsewhere: set[str]) -> dict[str, pathlib.Path]:
    """The files under a package's ``directory``, named under ``prefix``, but compiled files and
    the directories of other packages (``planner/sparkjet`` is the package ``sparkjet``)."""
    files = {}
    for entry in sorted(directory.iterdir()):
        if entry.name in _SKIPPED_PARTS or entry.suffix in (".pyc", ".pyo"):
            continue
        if entry.is_dir():
            if os.path.realpath(entry) not in elsewhere:
                files.update(_directoryFiles(entry, f"{prefix}/{entry.name}", elsewhere))
        elif entry.is_file() and not entry.name.endswith(_EXTENSIONS):
            files[f"{prefix}/{entry.name}"] = entry
    return files


def contentHash(contents: dict[str, bytes]) -> str:
    """Return 16 hex digits of a SHA-256 over the names and bytes of ``contents``."""
    digest = hashlib.sha256()
    for name, data in sorted(contents.items()):
        digest.update(b"%d:%s%d:" % (len(name), name.encode(), len(data)))
        digest.update(data)
    return digest.hexdigest()[:16]


def zipBytes(contents: dict[str, bytes]) -> bytes:
    """Zip ``contents`` by name, the same bytes for the same content (fixed times, sorted names)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(contents.items()):
            info = zipfile.ZipInfo(name, _ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def shipTo(sc: SparkContext) -> Bundle | None:
    """Add this process's bundle to ``sc`` (once per context) when its master is not local;
    return it, or None where nothing is shipped. The driver keeps importing from where it did:
    the path entry ``addPyFile`` puts on this process's path is taken off again."""
    if not shipsTo(sc.master):
        return None
    shipped = bundle()
    with _lock:
        if sc in _shippedTo:
            return shipped
        before = list(sys.path)
        for extension in shipped.extensions:
            sc.addFile(str(extension))
        sc.addPyFile(str(shipped.zipPath))
        sys.path[:] = [entry for entry in sys.path if entry in before]
        _shippedTo.add(sc)
    return shipped


def shipToServer(session) -> Bundle:
    """Add this process's bundle to the Spark Connect ``session`` as its artifacts (once per
    session): the zip as a Python file its Python workers import from, the extension modules
    as files in their working directory. Where the server runs is unknown to a client, so it
    is shipped whatever the URL."""
    shipped = bundle()
    with _lock:
        if session.session_id not in _shippedToSessions:
            session.addArtifacts(str(shipped.zipPath), pyfile=True)
            if shipped.extensions:
                session.addArtifacts(*map(str, shipped.extensions), file=True)
            _shippedToSessions.add(session.session_id)
    return shipped
