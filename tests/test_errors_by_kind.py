"""Errors by kind: one sparkjet base class, DagError only for the shape of a DAG, and inputs,
outputs, the processor contract, pipelines and planning each with their own class."""

import pytest

import sparkjet
from sparkjet import DagError, InputError, OutputError, ProcessorContractError, SparkjetError
from sparkjet.coredag import Outbox
from sparkjet.coredag.processors.sinks import FilesSinkP
from sparkjet.coredag.processors.sources import ReadFilesP


def test_every_error_sparkjet_exports_shares_one_base_class():
    errors = [value for value in vars(sparkjet).values() if isinstance(value, type) and issubclass(value, BaseException)]
    assert len(errors) >= 10
    assert all(issubclass(error, SparkjetError) for error in errors)


def test_a_missing_input_directory_is_an_input_error_not_a_dag_error(tmp_path):
    with pytest.raises(InputError) as raised:
        ReadFilesP(str(tmp_path / "missing")).preflight()
    assert not isinstance(raised.value, DagError)


def test_an_existing_output_directory_is_an_output_error_not_a_dag_error(tmp_path):
    with pytest.raises(OutputError) as raised:
        FilesSinkP(str(tmp_path)).preflight()
    assert not isinstance(raised.value, DagError)


def test_a_processor_breaking_the_outbox_contract_gets_a_processor_contract_error():
    outbox = Outbox(1, 1)
    outbox.offer("a")
    outbox.offer("b")
    outbox.drainBucket(0)
    with pytest.raises(ProcessorContractError) as raised:
        outbox.offer("c")
    assert not isinstance(raised.value, DagError)

