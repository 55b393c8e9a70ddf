"""A Spark Connect job's terminal outputs: its list sinks' items and its DataFrame sinks'
rows back to the client through Arrow, its files sinks' part files written on the server;
with each, the figures its tasks counted (see ``arrow_batches``)."""

import itertools
from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession

from sparkjet.coredag.errors import DagError
from sparkjet.coredag.model.dag import DAG
from sparkjet.coredag.processors.sinks import CollectForAssertion, CollectToList, CreateDataFrame, SaveAsTextFiles
from sparkjet.coredag.runtime.arrow_batches import Figures, collectedBatches
from sparkjet.coredag.runtime.arrow_tasks import FilesOut, PacketsOut
from sparkjet.coredag.runtime.dataframe_building import DataFrameBuilder
from sparkjet.coredag.runtime.physical_plan import terminalOutputOf
from sparkjet.coredag.runtime.server_directories import ServerOutputDirectory
from sparkjet.coredag.runtime.terminal_outputs import dataFrameRefused


def runTerminalFlows(
    spark: SparkSession, dag: DAG, builder: DataFrameBuilder, outputs: Mapping[str, ServerOutputDirectory]
) -> tuple[dict[object, list], dict[str, DataFrame], Figures]:
    """Run the job: compute each vertex without outbound edges into its terminal output; return
    the items collected by list name (an assertion sink's: by its check), the DataFrames and
    the figures of every task, with the states its processors saved in a stream's micro-batch."""
    lists: dict[object, list] = {}
    dataFrames: dict[str, DataFrame] = {}
    figures = Figures()
    for vertex in dag:
        flow = builder.vertexFlow(vertex.name)  # topological order: no deep recursion
        if dag.getOutboundEdges(vertex.name):
            continue
        output = terminalOutputOf(vertex.processorSupplier)
        if isinstance(output, SaveAsTextFiles):
            outputs[vertex.name].beginWrite()
            rows = flow.dataFrame(FilesOut(outputs[vertex.name].files, outputs[vertex.name].staging))
        else:
            rows = flow.dataFrame(PacketsOut(builder.crossingOf(vertex.name)))
        batches = collectedBatches(rows.toArrow(), figures)
        if isinstance(output, CollectToList | CollectForAssertion):
            collectedAs = output.listName if isinstance(output, CollectToList) else output.check
            lists.setdefault(collectedAs, []).extend(itertools.chain.from_iterable(batches))
        elif isinstance(output, CreateDataFrame):
            if output.name in dataFrames:
                raise DagError(f"Two sinks of one job write the DataFrame '{output.name}'; name them apart")
            dataFrames[output.name] = _dataFrameOf(spark, list(itertools.chain.from_iterable(batches)), output)
    return lists, dataFrames, figures


def _dataFrameOf(spark: SparkSession, items: list, output: CreateDataFrame) -> DataFrame:
    """Return the items as a DataFrame of the session (sent to it as Arrow); Spark's refusal
    of the items names the sink, as the classic engine's does."""
    try:
        return spark.createDataFrame(items, output.schema)
    except Exception as error:
        raise dataFrameRefused(output, error) from error
