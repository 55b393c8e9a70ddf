"""sparkjet in a notebook: tests/notebook/sparkjet_inline.ipynb executed headless in a Jupyter
kernel (nbclient, ipykernel), as a user would run it. The pipeline and its plan show as
pictures, the job as a table of its status and figures with its plan, the figures as tables; a
slow job's progress updates in place while join() waits, and the kernel's interrupt cancels it
cleanly: the next cells see it cancelled and run another job."""

import asyncio
import html
import pathlib
import re
import threading

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.spark  # the kernel starts a local Spark of its own

NOTEBOOK = pathlib.Path(__file__).with_name("sparkjet_inline.ipynb")


class RecordingClient(NotebookClient):
    """Runs a notebook, keeping every message its kernel sent about a cell."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.messages: list[dict] = []

    def process_message(self, msg, cell, cell_index):
        self.messages.append(msg)
        return super().process_message(msg, cell, cell_index)


def progressUpdates(client: RecordingClient, jobName: str) -> list[str]:
    """The HTML of the progress line of ``jobName`` each update put in place."""
    updates = [msg["content"] for msg in list(client.messages) if msg["msg_type"] == "update_display_data"]
    texts = [content["data"].get("text/html", "") for content in updates]
    return [text for text in texts if f"{jobName}: " in text]


def interruptOnceProgressShows(client: RecordingClient, started: pathlib.Path, stop: threading.Event) -> None:
    """Interrupt the kernel, as Jupyter's stop button does, once the slow job runs its first item
    and its progress line shows a stage."""
    while not stop.wait(0.1):
        if started.exists() and any("slow: stage" in text for text in progressUpdates(client, "slow")):
            asyncio.run(client.km.interrupt_kernel())  # SIGINT to the kernel's process group
            return


def outputsOf(notebook, number: int) -> list[dict]:
    """The outputs of the code cell ``number`` (from 0)."""
    return [cell for cell in notebook.cells if cell.cell_type == "code"][number].outputs


def richData(outputs: list[dict], kind: str) -> list[str]:
    return [output["data"][kind] for output in outputs if kind in output.get("data", {})]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook as it is once run, and the messages of its run."""
    directory = tmp_path_factory.mktemp("notebook")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = RecordingClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(directory)}}
    )
    stop = threading.Event()
    interrupter = threading.Thread(target=interruptOnceProgressShows, args=(client, directory / "started", stop))
    interrupter.start()
    try:
        client.execute()
    finally:
        stop.set()
        interrupter.join()
    return notebook, client


def test_a_pipeline_and_its_plan_show_as_the_plan_s_picture(executed):
    notebook, _ = executed
    for number in (0, 1):
        [svg] = richData(outputsOf(notebook, number), "image/svg+xml")
        assert "<svg" in svg and ">flat-map<" in html.unescape(svg) and ">group-and-aggregate-prepare<" in html.unescape(svg)
    assert richData(outputsOf(notebook, 1), "text/plain") == ["<Plan: 4 stages, 5 vertices, 4 edges>"]


def test_a_job_shows_its_status_figures_and_plan_with_figures(executed):
    notebook, client = executed
    outputs = outputsOf(notebook, 2)
    [ended, shown] = richData(outputs, "text/html")
    assert re.search(r"word-count: COMPLETED after \d+ s", ended)
    assert "<th>Status</th><td>COMPLETED</td>" in shown
    assert "<th>Items read</th><td>2</td>" in shown and "<th>Items written</th><td>8</td>" in shown
    assert "<svg" in shown and ">group-and-aggregate-prepare<" in html.unescape(shown)


def test_the_figures_show_as_tables(executed):
    notebook, _ = executed
    [tables] = richData(outputsOf(notebook, 3), "text/html")
    assert html.escape("Job 'word-count'") in tables
    assert '<tr class="edge"><td>group-and-aggregate \u2192 listSink(counts)</td><td style="text-align: right">8</td>' in tables
    assert tables.count("<table>") == 2


def test_a_running_job_s_progress_updates_in_place_and_an_interrupt_cancels_it(executed):
    notebook, client = executed
    progress = progressUpdates(client, "slow")
    assert any(re.search(r"slow: stage 1/1 · tasks \d+/\d+( · [^·]+)? · \d+ s", text) for text in progress)
    assert re.search(r"slow: (being cancelled|FAILED) after \d+ s", progress[-1])
    [running] = richData(outputsOf(notebook, 4), "text/html")
    assert "<th>Status</th><td>RUNNING</td>" in running and "<th>Progress</th>" in running
    errors = [output for output in outputsOf(notebook, 5) if output["output_type"] == "error"]
    assert [error["ename"] for error in errors] == ["Interrupted"]
    assert "Job 'slow' was cancelled: interrupted (Ctrl-C)" in errors[0]["evalue"]
    after = outputsOf(notebook, 6)
    assert [output["text"] for output in after if output["output_type"] == "stream"] == [
        "cancelled: Job 'slow' was cancelled\n"
    ]
    [shown] = richData(after, "text/html")
    assert "<th>Status</th><td>FAILED</td>" in shown and "was cancelled" in shown
    assert richData(outputsOf(notebook, 7), "text/plain")[-1] == "'COMPLETED'"
