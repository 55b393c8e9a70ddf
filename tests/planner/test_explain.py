"""plan(p).explain(): what each vertex runs, each edge's kind, and why each boundary exists."""

import attrs

from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources, wholeItem
from sparkjet.planner import plan
from sparkjet.planner.cli import main


def reasons(p: Pipeline) -> list[str]:
    text = plan(p).explain()
    why = text.split("\nWhy\n", 1)[1].split("\n\n", 1)[0] if "\nWhy\n" in text else ""
    return [line.strip() for line in why.splitlines()]


def test_word_count_explains_fusion_and_the_two_stage_aggregation():
    p = Pipeline.create()
    (p.readFrom(Sources.files("books")).flatMap(str.split).filter(bool)
      .groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(Sinks.list("c")))
    text = plan(p).explain()
    assert "  fused(flat-map, filter) (parallelism default)\n    runs the stages `flat-map`, `filter`, fused into one loop" in text
    assert "  group-and-aggregate-prepare (parallelism default)\n    runs the prepare step of `group-and-aggregate`" in text
    assert "  group-and-aggregate-prepare -> group-and-aggregate: distributed partitioned" in text
    assert reasons(p) == ["`group-and-aggregate`: two-stage: prepare per task, combine after the shuffle"]


def test_each_of_jets_fusion_conditions_is_named():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1])).map(str)
    source.filter(bool).writeTo(Sinks.logger())
    source.rebalance().map(len).writeTo(Sinks.logger())
    source.map(str.upper).setLocalParallelism(4).map(str.lower).setLocalParallelism(2).writeTo(Sinks.logger())
    assert reasons(p) == [
        "not fused: `map` has 3 downstream stages (`filter`, `map-2`, `map-3`)",
        "not fused: local parallelism 2 of `map-4` ≠ 4 of `map-3`",
    ]


def test_rebalance_is_named_as_the_reason():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).map(str).rebalance().filter(bool).writeTo(Sinks.logger())
    assert reasons(p) == ["not fused: `rebalance()` before `filter`"]


def test_fusion_turned_off_is_said():
    p = Pipeline.create().setFusionEnabled(False)
    p.readFrom(Sources.items([1])).map(str).filter(bool).writeTo(Sinks.logger())
    assert [v.name for v in plan(p)] == ["items", "map", "filter", "loggerSink"]
    assert reasons(p) == ["not fused: `map` -> `filter`: fusion is turned off for this pipeline"]


def test_single_stage_aggregations_say_why():
    p = Pipeline.create()
    items = p.readFrom(Sources.items([1]))
    noCombine = attrs.evolve(AggregateOperations.counting(), combineFn=None)
    items.groupingKey(wholeItem()).aggregate(noCombine).writeTo(Sinks.logger())
    items.rebalance().aggregate(AggregateOperations.counting()).writeTo(Sinks.logger())
    items.rebalance().groupingKey(wholeItem()).aggregate(AggregateOperations.counting()).writeTo(Sinks.logger())
    assert reasons(p) == [
        "`group-and-aggregate`: single-stage aggregation: the operation has no combine",
        "`aggregate`: two-stage: prepare per task, combine after the shuffle",
        "`group-and-aggregate-2`: single-stage aggregation: `rebalance()` before it sends every item across",
    ]


def test_plan_command_explains(tmp_path, capsys):
    script = tmp_path / "job.py"
    script.write_text(
        "from sparkjet.pipeline import Pipeline, Sinks, Sources\nfrom planner import Jet\n"
        "p = Pipeline.create()\np.readFrom(Sources.items([1])).map(str).writeTo(Sinks.logger())\n"
        "Jet().newJob(p)\n"
    )
    assert main(["plan", str(script), "--explain"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Core DAG of 3 vertices and 2 edges") and "  map -> loggerSink: local unicast" in out
