"""Errors that teach: a failure names the stage, the line that defined it, the item, what was
wrong and what to do; the traceback shown is the user's code only, never a JVM stack trace."""

import os
import pickle
import re
import sys
import traceback

import pytest

from sparkjet.coredag import DagError, UserFunctionError
from sparkjet.coredag.api.processor import ProcessorContext
from sparkjet.coredag.errors import SourceLocation, StageName
from sparkjet.pipeline import AggregateOperations, Pipeline, Sinks, Sources
from sparkjet.planner import plan
from sparkjet.planner.cli import main
from tests.conftest import PROJECT, here, run

THIS_FILE = os.path.basename(__file__)
CONTEXT = ProcessorContext("v", 0, 1)
NOT_THE_USERS = re.compile(r"pyspark|py4j|coredag|planner|pipeline[/\\]|runpy|concurrent")
JVM_TRACE = re.compile(r"at org\.apache|Py4JJavaError")


def runVertex(p: Pipeline, vertexName: str, items: list) -> list:
    """Run one planned vertex's fast path in this process (no Spark)."""
    supplier = plan(p).getVertex(vertexName).processorSupplier
    return list(supplier.fastPath(CONTEXT)(iter(items)))


def inverse(x):
    return 1 / x


# in this process: the planned processors name the stage and its line


def test_a_failing_function_names_stage_line_item_and_exception_and_keeps_the_users_frames():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).map(inverse).writeTo(Sinks.list("out"))
    line = here() - 1
    with pytest.raises(UserFunctionError) as raised:
        runVertex(p, "map", [2, 0])
    error = raised.value
    assert str(error) == (
        f"Stage 'map' (defined at {THIS_FILE}:{line}) failed on item 0: ZeroDivisionError: division by zero"
    )
    assert (error.stageName, error.definedAt) == ("map", SourceLocation(__file__, line))
    assert type(error.stageName) is str
    assert isinstance(error.__cause__, ZeroDivisionError)
    assert error.traceback == (
        f'  File "{__file__}", line {inverse.__code__.co_firstlineno + 1}, in inverse\n'
        "    return 1 / x\n"
        "ZeroDivisionError: division by zero\n"
    )


def test_each_stage_of_a_fused_vertex_is_named_with_its_own_line():
    p = Pipeline.create()
    (
        p.readFrom(Sources.items([1]))
        .map(lambda x: x - 1)
        .filter(lambda x: 1 / x)
        .writeTo(Sinks.list("out"))
    )
    filterLine = here() - 3
    with pytest.raises(UserFunctionError) as raised:
        runVertex(p, "fused(map, filter)", [3, 1])
    assert str(raised.value).startswith(f"Stage 'filter' (defined at {THIS_FILE}:{filterLine}) failed on item 0:")


def test_flatMap_returning_what_is_not_iterable_says_what_to_return():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).flatMap(lambda x: x * 2).writeTo(Sinks.list("out"))
    line = here() - 1
    with pytest.raises(UserFunctionError) as raised:
        runVertex(p, "flat-map", [3])
    assert str(raised.value) == (
        f"Stage 'flat-map' (defined at {THIS_FILE}:{line}) failed on item 3: TypeError: 'int' object is not "
        "iterable; flatMap's function must return an iterable (a list, a generator...)"
    )
    assert raised.value.traceback == "", "no frame of the user's code raised it"


def test_the_hint_is_left_out_when_the_users_own_code_raised_the_same_error():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).flatMap(lambda x: list(x)).writeTo(Sinks.list("out"))
    with pytest.raises(UserFunctionError) as raised:
        runVertex(p, "flat-map", [3])
    assert str(raised.value).endswith("TypeError: 'int' object is not iterable")
    assert raised.value.hint == ""


def test_an_unhashable_key_is_named_by_its_type_with_what_to_do():
    p = Pipeline.create()
    stage = p.readFrom(Sources.items([1])).groupingKey(lambda x: [x])
    stage.aggregate(AggregateOperations.counting()).writeTo(Sinks.list("out"))
    line = here() - 1
    with pytest.raises(UserFunctionError) as raised:
        runVertex(p, "group-and-aggregate-prepare", [7])
    assert str(raised.value) == (
        f"Stage 'group-and-aggregate' (defined at {THIS_FILE}:{line}) failed on item 7: TypeError: unhashable "
        "type: 'list'; a key must be hashable (a str, a number, a tuple...)"
    )


def test_a_user_function_error_pickles_with_its_stage_line_hint_and_traceback():
    p = Pipeline.create()
    p.readFrom(Sources.items([1])).flatMap(lambda x: x).writeTo(Sinks.list("out"))
    with pytest.raises(UserFunctionError) as raised:
        runVertex(p, "flat-map", [3])
    restored = pickle.loads(pickle.dumps(raised.value))
    assert str(restored) == str(raised.value)
    assert (restored.stageName, restored.definedAt, restored.hint, restored.traceback) == (
        raised.value.stageName, raised.value.definedAt, raised.value.hint, raised.value.traceback,
    )
    assert type(restored.__cause__) is TypeError


def test_a_stage_name_equals_the_plain_name_and_pickles_with_its_location():
    name = StageName("map", SourceLocation("job.py", 3))
    assert name == "map" and hash(name) == hash("map")
    assert pickle.loads(pickle.dumps(name)).definedAt == SourceLocation("job.py", 3)


def test_two_stages_needing_one_vertex_name_are_both_named_with_their_lines():
    p = Pipeline.create()
    source = p.readFrom(Sources.items([1]))
    source.map(str).setName("count-prepare").writeTo(Sinks.noop())
    mapLine = here() - 1
    source.aggregate(AggregateOperations.counting()).setName("count").writeTo(Sinks.noop())
    countLine = here() - 1
    with pytest.raises(DagError) as raised:
        plan(p)
    assert str(raised.value) == (
        f"Vertex count-prepare is already defined. Stage 'count' (defined at {THIS_FILE}:{countLine}) and "
        f"Stage 'count-prepare' (defined at {THIS_FILE}:{mapLine}) both need a vertex named 'count-prepare'; "
        "rename one of them with setName()"
    )


# the sparkjet command: one line of reason, the user's frames, no JVM


FAILING_SCRIPT = """\
from sparkjet.pipeline import Pipeline, Sinks, Sources
from sparkjet.planner import Jet

p = Pipeline.create()
p.readFrom(Sources.items([1, 0])).map(lambda x: 1 / x).writeTo(Sinks.list("out"))
Jet().newJob(p).join()
"""


def test_a_function_failing_on_the_driver_while_the_script_defines_its_pipeline(tmp_path, capsys):
    script = tmp_path / "job.py"
    script.write_text(
        "from sparkjet.pipeline import Pipeline, Sources\n"
        "def load():\n"
        "    return [1 / 0]\n"
        "Pipeline.create().readFrom(Sources.items(load()))\n"
    )
    assert main(["plan", str(script)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "sparkjet: ZeroDivisionError: division by zero",
        f'  File "{script}", line 4, in <module>',
        "    Pipeline.create().readFrom(Sources.items(load()))",
        f'  File "{script}", line 3, in load',
        "    return [1 / 0]",
    ]


@pytest.mark.spark
def test_a_failing_map_on_spark_chains_the_original_and_keeps_only_the_users_frames(jet):
    p = Pipeline.create()
    p.readFrom(Sources.items([1, 0])).map(lambda x: 1 / x).writeTo(Sinks.list("out"))
    line = here() - 1
    with pytest.raises(UserFunctionError) as raised:
        jet.newJob(p).join()
    error = raised.value
    assert str(error) == (
        f"Stage 'map' (defined at {THIS_FILE}:{line}) failed on item 0: ZeroDivisionError: division by zero"
    )
    assert type(error.__cause__) is ZeroDivisionError
    assert error.traceback.splitlines() == [
        f'  File "{__file__}", line {line}, in <lambda>',
        "    p.readFrom(Sources.items([1, 0])).map(lambda x: 1 / x).writeTo(Sinks.list(\"out\"))",
        "ZeroDivisionError: division by zero",
    ]
    assert error.__notes__ == [f"Where the user's code raised it, in a Spark worker:\n{error.traceback.rstrip()}"]
    assert {frame.filename for frame in traceback.extract_tb(error.__traceback__)} == {
        __file__, os.path.join(PROJECT, "planner", "jet.py")
    }


@pytest.mark.spark
def test_sparkjet_run_of_a_failing_script_prints_one_reason_and_the_scripts_frames(jet, tmp_path, capsys):
    script = tmp_path / "job.py"
    script.write_text(FAILING_SCRIPT)
    assert main(["run", str(script)]) == 1
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        "sparkjet: UserFunctionError: Stage 'map' (defined at job.py:5) failed on item 0: "
        "ZeroDivisionError: division by zero",
        f'  File "{script}", line 5, in <lambda>',
        "    p.readFrom(Sources.items([1, 0])).map(lambda x: 1 / x).writeTo(Sinks.list(\"out\"))",
        "ZeroDivisionError: division by zero",
    ]
    assert not JVM_TRACE.search(out + err)


@pytest.mark.spark
def test_the_sparkjet_command_shows_no_jvm_stack_trace_on_its_real_stderr(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(FAILING_SCRIPT)
    done = run(
        [sys.executable, "-c", "import sys; from sparkjet.planner.cli import main; sys.exit(main())", "run", str(script)],
        cwd=PROJECT, env={**os.environ, "SPARKJET_MASTER": "local[1]"},
    )
    assert done.returncode == 1
    reasons = [line for line in done.stderr.splitlines() if line.startswith("sparkjet:")]
    assert reasons == [
        "sparkjet: UserFunctionError: Stage 'map' (defined at job.py:5) failed on item 0: "
        "ZeroDivisionError: division by zero"
    ]
    assert not JVM_TRACE.search(done.stdout + done.stderr) and "Traceback" not in done.stderr
    assert not NOT_THE_USERS.search(done.stderr)
