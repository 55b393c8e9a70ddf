"""Sources: where a pipeline's items come from."""

import os
from collections.abc import Callable, Iterable

from sparkjet.coredag.errors import SourceLocation
from sparkjet.coredag.processors.built_stream_source import (
    StartProcessor,
    closeProcessor,
    completeOnce,
    restoreProcessor,
    snapshotOfProcessor,
)
from sparkjet.coredag.processors.stream_sources import DEFAULT_MAX_LINE_BYTES
from sparkjet.pipeline.batch_sources import (
    DataFrameSource,
    FilesSource,
    ItemsSource,
    JsonSource,
    ProcessorBatchSource,
    inputPaths,
    itemsSource,
    readableCharset,
)
from sparkjet.pipeline.errors import PipelineError
from sparkjet.pipeline.functions import checkFunction
from sparkjet.pipeline.source_builder import BuiltStreamSource
from sparkjet.pipeline.stream_sources import FileWatcherSource, SocketSource, fileWatcher, socket


class Sources:
    """Factories of sources: batch sources, and the stream sources ``fileWatcher`` and ``socket``."""

    @staticmethod
    def fileWatcher(
        directory: str, glob: str = "*", charset: str = "utf-8", *,
        ignoreMissingFiles: bool = True, maxLineBytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> FileWatcherSource:
        """Stream the lines of the files that appear in ``directory`` with names matching ``glob``:
        each file whole, once, those already there when the job starts included; appends to a file
        already read are not seen, so move files in atomically (docs/guide/streams.md).

        Args:
            directory: the watched directory.
            glob: which files of the directory to read.
            charset: the files' charset; undecodable bytes fail the job naming the file.
            ignoreMissingFiles: skip, with a warning, a file deleted before it is read; False makes
                it an InputError.
            maxLineBytes: the longest line read; a longer one fails the job naming the file and line."""
        return fileWatcher(directory, glob, charset, ignoreMissingFiles=ignoreMissingFiles, maxLineBytes=maxLineBytes)

    @staticmethod
    def socket(host: str, port: int) -> SocketSource:
        """Stream the lines a server at ``host:port`` sends (UTF-8); no replay after a restart."""
        return socket(host, port)

    @staticmethod
    def files(directory: str, glob: str = "*", charset: str = "utf-8") -> FilesSource:
        """Read the lines of the files in ``directory`` whose names match ``glob`` (an empty
        directory gives none), as Spark's reader gives them: lines end at ``\\r\\n``, ``\\r`` or
        ``\\n``; hidden files (names starting with '.' or '_') and a UTF-8 byte order mark at the
        start of a file are skipped.

        Args:
            directory: a local path, or a URL (``hdfs://``, ``s3a://``, ``file://`` ...) read by
                Spark's reader.
            glob: which files of the directory to read.
            charset: the files' charset; one whose newline is the byte ``\\n`` (UTF-8, Latin-1...)."""
        directory, glob = inputPaths(directory, glob, "Sources.files")
        name = f"filesSource({os.path.join(directory, glob)})"
        return FilesSource(name, directory, glob, readableCharset(charset, "Sources.files"))

    @staticmethod
    def json(directory: str, glob: str = "*", charset: str = "utf-8") -> JsonSource:
        """Read each non-blank line of the files matching ``glob`` as one JSON object (a dict),
        the lines and files as ``Sources.files`` reads them."""
        directory, glob = inputPaths(directory, glob, "Sources.json")
        name = f"jsonSource({os.path.join(directory, glob)})"
        return JsonSource(name, directory, glob, readableCharset(charset, "Sources.json"))

    @staticmethod
    def dataframe(dataFrame) -> DataFrameSource:
        """Emit the rows of a Spark DataFrame as dicts, read partition by partition on the workers."""
        if not hasattr(type(dataFrame), "rdd"):
            raise PipelineError(
                f"Sources.dataframe (called at {SourceLocation.ofUserCall()}): expected a Spark "
                f"DataFrame, got {type(dataFrame).__name__}"
            )
        return DataFrameSource("dataframeSource", dataFrame)

    @staticmethod
    def batchFromProcessor(
        name: str, processorSupplier: Callable, preferredLocalParallelism: int = -1
    ) -> ProcessorBatchSource:
        """Read the items that processors from ``processorSupplier()`` emit, as a batch source
        named ``name`` (Jet's ``Sources.batchFromProcessor``): each completes once it emitted its last."""
        checkFunction(processorSupplier, name, "processorSupplier")
        return ProcessorBatchSource(name, processorSupplier, preferredLocalParallelism=preferredLocalParallelism)

    @staticmethod
    def streamFromProcessor(name: str, processorSupplier: Callable) -> BuiltStreamSource:
        """Stream the items a processor from ``processorSupplier()`` emits from ``complete()``
        (Jet's ``Sources.streamFromProcessor``). It runs on the driver, as a SourceBuilder
        source does, its items reaching the job through Spark; its ``saveToSnapshot`` entries
        go with them, and a restarted job gives them back to a new processor before it goes on."""
        checkFunction(processorSupplier, name, "processorSupplier")
        return BuiltStreamSource(
            name, StartProcessor(processorSupplier), completeOnce, closeProcessor,
            createSnapshotFn=snapshotOfProcessor, restoreSnapshotFn=restoreProcessor,
        )

    @staticmethod
    def items(items: Iterable) -> ItemsSource:
        """Emit the given items; they must be picklable."""
        return itemsSource(items)
