"""The golden test: seed 004's word-count pipeline plans to the Core DAG Jet prints."""

import os
import re

from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import plan

# Verbatim from seed 004 ("Core DAG Planner"). The page wraps two long edge lines and indents
# with four spaces; Jet's DAG.toDotString writes one line per edge, indented with tabs.
SEED_004_DOT = """\
digraph DAG {
    "filesSource(/*)" [localParallelism=1];
    "fused(flat-map, filter)" [localParallelism=2];
    "group-and-aggregate-prepare" [localParallelism=2];
    "group-and-aggregate" [localParallelism=2];
    "loggerSink" [localParallelism=1];
    "filesSource(/*)" -> "fused(flat-map, filter)" [queueSize=1024];
    "fused(flat-map, filter)" -> "group-and-aggregate-prepare"
        [label="partitioned", queueSize=1024];
    subgraph cluster_0 {
        "group-and-aggregate-prepare" -> "group-and-aggregate"
            [label="distributed-partitioned", queueSize=1024];
    }
    "group-and-aggregate" -> "loggerSink" [queueSize=1024];
}"""


def jetLayout(pageText: str) -> str:
    """Undo the page's layout: rejoin wrapped edge lines, four spaces of indent become a tab."""
    joined = re.sub(r"\n\s+\[", " [", pageText)
    return re.sub(r"^((?:    )+)", lambda m: "\t" * (len(m.group(1)) // 4), joined, flags=re.M)


def anyParallelism(dot: str) -> str:
    """Replace every localParallelism value (a number or ``default``) with ``N``."""
    return re.sub(r"localParallelism=(?:[0-9]+|default)", "localParallelism=N", dot)


def tokenize(line: str) -> list[str]:
    return re.split(r"\W+", line.lower())


def nonEmpty(word: str) -> bool:
    return word != ""


def seedPipeline(directory: str) -> tuple[Pipeline, object]:
    """Seed 004's pipeline; returns it and its source stage."""
    p = Pipeline.create()
    source = p.readFrom(Sources.files(directory))
    (
        source.flatMap(tokenize)
        .filter(nonEmpty)
        .groupingKey(wholeItem())
        .aggregate(AggregateOperations.counting())
        .writeTo(Sinks.logger())
    )
    return p, source


def test_page_layout_normalisation_gives_tabs_and_one_line_per_edge():
    normalised = jetLayout(SEED_004_DOT).splitlines()
    assert len(normalised) == 13
    assert normalised[7] == '\t"fused(flat-map, filter)" -> "group-and-aggregate-prepare" [label="partitioned", queueSize=1024];'
    assert normalised[9] == '\t\t"group-and-aggregate-prepare" -> "group-and-aggregate" [label="distributed-partitioned", queueSize=1024];'


def test_seed_pipeline_plans_to_the_seed_dot_up_to_parallelism_values():
    p, _ = seedPipeline("/")
    assert anyParallelism(plan(p).toDotString()) == anyParallelism(jetLayout(SEED_004_DOT))


def test_seed_pipeline_with_seed_parallelism_plans_to_the_seed_dot_exactly():
    p, source = seedPipeline("/")
    source.setLocalParallelism(1)
    assert plan(p).toDotString(defaultParallelism=2) == jetLayout(SEED_004_DOT)


def test_seed_pipeline_plans_to_exactly_this_dot_text(tmp_path):
    directory = str(tmp_path / "books")
    p, _ = seedPipeline(directory)
    source = f"filesSource({os.path.join(directory, '*')})"
    expected = (
        "digraph DAG {\n"
        f'\t"{source}" [localParallelism=default];\n'
        '\t"fused(flat-map, filter)" [localParallelism=default];\n'
        '\t"group-and-aggregate-prepare" [localParallelism=default];\n'
        '\t"group-and-aggregate" [localParallelism=default];\n'
        '\t"loggerSink" [localParallelism=1];\n'
        f'\t"{source}" -> "fused(flat-map, filter)" [queueSize=1024];\n'
        '\t"fused(flat-map, filter)" -> "group-and-aggregate-prepare" [label="partitioned", queueSize=1024];\n'
        "\tsubgraph cluster_0 {\n"
        '\t\t"group-and-aggregate-prepare" -> "group-and-aggregate" [label="distributed-partitioned", queueSize=1024];\n'
        "\t}\n"
        '\t"group-and-aggregate" -> "loggerSink" [queueSize=1024];\n'
        "}"
    )
    assert plan(p).toDotString() == expected


def test_planning_a_files_source_does_not_look_at_the_directory(tmp_path):
    missing = str(tmp_path / "does-not-exist")
    p, _ = seedPipeline(missing)
    names = [vertex.name for vertex in plan(p).vertices()]
    assert names[0] == f"filesSource({os.path.join(missing, '*')})"
    assert not os.path.exists(missing)
