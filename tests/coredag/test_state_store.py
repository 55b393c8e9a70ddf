"""A stream processor's state files (issue 26, points 2 to 4): each task writes its processor's
version, a delta of the entries changed and the keys removed where it can, a base every
``COMPACT_EVERY`` versions or where keys repeat; read back, a chain gives the entries saved. And
the processors a Python worker keeps alive between micro-batches, taken up only by the task that
restores what they saved."""

import os
import pickle

import pytest

from sparkjet.coredag.runtime.checkpoint_storage import CheckpointError
from sparkjet.coredag.runtime.live_processors import LiveProcessor, keepLive, takeLive
from sparkjet.coredag.runtime.processor_state import ProcessorState
from sparkjet.coredag.api.saves_changes import REMOVED
from sparkjet.coredag.processors.keyed import DistinctP, KeyedStepProcessor
from sparkjet.coredag.runtime.state_store import (
    COMPACT_EVERY,
    LONGEST_CHAIN,
    MissingStateError,
    SavedEntries,
    StateStore,
)


def saveVersions(root: str, versions: list[dict]) -> tuple[list, ProcessorState]:
    """Save each of ``versions`` (entries by key) as the next version of processor 0 of 'v'."""
    saved, last, chain, kinds = None, None, (), []
    for number, entries in enumerate(versions):
        saved = StateStore(root, number).save("v", 0, list(entries.items()), last, chain)
        last, chain = saved.entries, saved.files
        kinds.append(chain[-1].rsplit(".", 1)[1] if chain else None)
    return kinds, ProcessorState(saved.files, saved.size, savedBy=saved.savedBy)


def test_a_chain_of_deltas_reads_back_the_last_version_changes_removals_and_all(tmp_path):
    versions = [{"a": 1, "b": 2}, {"a": 1, "b": 3, "c": [4]}, {"b": 3, "c": [4, 5]}, {"b": 3, "c": [4, 5], "d": None}]
    kinds, state = saveVersions(str(tmp_path), versions)
    assert kinds == ["base", "delta", "delta", "delta"]
    assert dict(StateStore(str(tmp_path), 9).load(state)) == versions[-1]


def test_a_delta_holds_only_what_changed(tmp_path):
    held = {f"key-{number}": number for number in range(5000)}
    touched = dict(held, **{"key-7": -1, "new": 1})
    first = StateStore(str(tmp_path), 0).save("v", 0, list(held.items()), None, ())
    second = StateStore(str(tmp_path), 1).save("v", 0, list(touched.items()), first.entries, first.files)
    assert second.size < 100 < first.size / 100, (first.size, second.size)


def test_every_compact_every_versions_a_base_is_written_again(tmp_path):
    kinds, state = saveVersions(str(tmp_path), [{"k": number} for number in range(COMPACT_EVERY + 2)])
    assert kinds == ["base"] + ["delta"] * (COMPACT_EVERY - 1) + ["base", "delta"]
    assert len(state.files) == 2 and dict(StateStore(str(tmp_path), 99).load(state)) == {"k": COMPACT_EVERY + 1}


def test_entries_with_repeated_or_unhashable_keys_are_saved_whole_each_time(tmp_path):
    assert SavedEntries.of([("k", 1), ("k", 2)]).byKey is None
    assert SavedEntries.of([(["unhashable"], 1)]).byKey is None
    store = StateStore(str(tmp_path), 0)
    first = store.save("v", 0, [("k", 1), ("k", 2)], None, ())
    second = StateStore(str(tmp_path), 1).save("v", 0, [("k", 1), ("k", 3)], first.entries, first.files)
    assert len(second.files) == 1 and second.files[0].endswith(".base")
    assert store.load(ProcessorState(second.files)) == [("k", 1), ("k", 3)]


def test_no_entries_write_no_file(tmp_path):
    saved = StateStore(str(tmp_path), 0).save("v", 0, [], None, ())
    assert saved.files == () and not os.listdir(tmp_path)


def test_a_missing_state_file_names_it(tmp_path):
    _, state = saveVersions(str(tmp_path), [{"a": 1}])
    os.remove(tmp_path / state.files[0])
    with pytest.raises(MissingStateError, match=r"The state file '.*' is missing"):
        StateStore(str(tmp_path), 1).load(state)


@pytest.mark.parametrize(
    "kind, breakage, wrong",
    [
        ("base", lambda data: b"\xff\xfe", r"UnpicklingError: .*; 2 bytes"),
        ("base", lambda data: b"", r"EOFError: Ran out of input; 0 bytes"),
        ("base", lambda data: data[: len(data) // 2], r"(UnpicklingError|EOFError): .*; \d+ bytes"),
        ("base", lambda data: pickle.dumps({"a": 1}), r"it holds a dict, not a list of \(key, value\) entries"),
        ("delta", lambda data: b"\xff\xfe", r"UnpicklingError: .*; 2 bytes"),
        ("delta", lambda data: pickle.dumps([("a", 1)]), r"it holds a list, not entries changed and keys removed"),
    ],
)
def test_a_broken_state_file_is_a_checkpoint_error_naming_it(tmp_path, kind, breakage, wrong):
    _, state = saveVersions(str(tmp_path / "cp" / "state"), [{"a": 1, "b": 2}, {"a": 1, "b": 3}])
    broken = next(name for name in state.files if name.endswith(kind))
    path = tmp_path / "cp" / "state" / broken
    path.write_bytes(breakage(path.read_bytes()))
    with pytest.raises(CheckpointError, match=(
        rf"^The state file '{path}' cannot be read \({wrong}\): it was cut short or changed from outside; restore "
        rf"it, or remove the checkpoint '{tmp_path / 'cp'}' to start the job over, empty: that loses the job's state"
    )):
        StateStore(str(tmp_path / "cp" / "state"), 2).load(state)


def test_a_kept_processor_is_taken_up_only_by_the_task_restoring_what_it_saved():
    key, files = ("/cp/state", "v", 0), ("v/0/0-a.base", "v/0/3-abc.delta")
    keepLive(key, LiveProcessor("processor", "outbox", "3-abc", files, SavedEntries({})))
    assert takeLive(key, ProcessorState(files[:1], savedBy="2-old")) is None, "a stale copy is dropped"
    assert takeLive(key, ProcessorState(files, savedBy="3-abc")) is None, "and gone"
    keepLive(key, LiveProcessor("processor", "outbox", "3-abc", files, SavedEntries({})))
    assert takeLive(key, ProcessorState(files, savedBy="3-abc")).live.processor == "processor"
    assert takeLive(key, ProcessorState(files, savedBy="3-abc")) is None, "a task takes it out: a failed one leaves nothing"


def test_a_kept_processor_that_saves_its_changes_is_taken_up_later_with_the_deltas_saved_since():
    key, files = ("/cp/state", "v", 0), ("v/0/0-a.base", "v/0/3-abc.delta")
    processor = KeyedStepProcessor(DistinctP(str, "distinct"))
    keepLive(key, LiveProcessor(processor, "outbox", "3-abc", files, SavedEntries(None)))
    later = ProcessorState((*files, "v/0/4-def.delta", "v/0/5-ghi.delta"), savedBy="5-ghi")
    assert takeLive(key, later).replayed == ("v/0/4-def.delta", "v/0/5-ghi.delta")
    keepLive(key, LiveProcessor(processor, "outbox", "3-abc", files, SavedEntries(None)))
    assert takeLive(key, ProcessorState(("v/0/4-new.base",), savedBy="4-new")) is None, "another chain: dropped"


def test_a_delta_a_processor_gives_removes_the_keys_it_marks_removed(tmp_path):
    store = StateStore(str(tmp_path), 0)
    base = store.save("v", 0, [("a", 1), ("b", 2), ("c", 3)], None, (), comparing=False)
    assert base.entries == SavedEntries(None), "its next versions are deltas it gives: nothing kept to compare"
    delta = StateStore(str(tmp_path), 1).saveChanges("v", 0, [("a", 10), ("b", REMOVED), ("d", 4)], base.files)
    unchanged = StateStore(str(tmp_path), 2).saveChanges("v", 0, [], delta.files)
    assert unchanged.files == delta.files and unchanged.size == 0, "nothing touched: no file"
    state = ProcessorState(unchanged.files, savedBy=unchanged.savedBy)
    assert sorted(StateStore(str(tmp_path), 3).load(state)) == [("a", 10), ("c", 3), ("d", 4)]


def test_a_processor_gives_deltas_until_they_outweigh_its_base(tmp_path):
    root = str(tmp_path)
    base = StateStore(root, 0).save("v", 0, [(key, key) for key in range(100)], None, (), comparing=False)
    chain = base.files
    for version in range(1, 1000):
        if not StateStore(root, version).extends(chain):
            break
        chain = StateStore(root, version).saveChanges("v", 0, [(0, version), (1, version)], chain).files
    sizes = [os.path.getsize(os.path.join(root, name)) for name in chain]
    assert sum(sizes[1:]) >= sizes[0] > sum(sizes[1:-1]), "a base is due once the deltas weigh more than it"
    assert not StateStore(root, 0).extends(()), "no base yet: the first version is one"
    os.remove(os.path.join(root, chain[-1]))
    assert not StateStore(root, 0).extends(chain), "a file gone: a base is written (a restore says what is missing)"


def test_a_chain_of_tiny_deltas_is_compacted_after_the_longest_chain(tmp_path):
    root = str(tmp_path)
    chain = StateStore(root, 0).save("v", 0, [(key, key) for key in range(10_000)], None, (), comparing=False).files
    for version in range(1, LONGEST_CHAIN):
        assert StateStore(root, version).extends(chain)
        chain = StateStore(root, version).saveChanges("v", 0, [(0, version)], chain).files
    assert len(chain) == LONGEST_CHAIN and not StateStore(root, 0).extends(chain)


def test_the_changes_in_deltas_are_their_last_word_on_each_key(tmp_path):
    root = str(tmp_path)
    base = StateStore(root, 0).save("v", 0, [("a", 1), ("b", 2)], None, (), comparing=False)
    chain = base.files
    for version, changes in enumerate([[("a", REMOVED), ("b", 3)], [("a", 4), ("b", REMOVED), ("c", 5)]], 1):
        chain = StateStore(root, version).saveChanges("v", 0, changes, chain).files
    assert StateStore(root, 3).changesIn(chain[1:]) == ({"a": 4, "c": 5}, {"b"}), "removed then back; changed then removed"
