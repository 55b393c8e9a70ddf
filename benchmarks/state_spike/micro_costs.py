"""State-store spike: the CPU cost, in one process (no Spark), of each way to find what a
micro-batch changed in a processor's state of K keys when it touched 20k of them (100k words,
one partition's share), and of the full snapshot a compaction writes.

    python -m benchmarks.state_spike.micro_costs
"""

import json
import os
import pickle
import random
import tempfile
import time

from benchmarks.state_spike.state_tasks import count, word

MISSING = object()


class TrackedDict(dict):
    """A processor's state map that records the keys set since the last snapshot (the
    'store-backed map' option): only __setitem__/__delitem__ are overridden."""

    __slots__ = ("dirty", "removed")

    def __init__(self, *args):
        super().__init__(*args)
        self.dirty, self.removed = set(), set()

    def __setitem__(self, key, value):
        self.dirty.add(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key):
        self.removed.add(key)
        dict.__delitem__(self, key)


def best(fn, reps=3):
    times = []
    for _ in range(reps):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return round(min(times), 4)


def main():
    rnd = random.Random(1)
    packets = [[word(rnd.randrange(20_000)) for _ in range(1000)] for _ in range(100)]
    out = {}
    for keys in (10_000, 250_000, 500_000):  # one partition's share of 20k, 500k, 1M on 2 partitions
        base = {word(i): 1 for i in range(0, keys * 2, 2)}
        r = {}
        state = dict(base)
        r["run_plain"] = best(lambda: [count(state, p) for p in packets])
        dirty = set()
        r["run_dirty_set"] = best(lambda: [count(state, p, dirty) for p in packets])
        tracked = TrackedDict(base)
        r["run_tracked_dict"] = best(lambda: [count(tracked, p) for p in packets])
        last = dict(state)
        r["diff_by_key"] = best(lambda: {k: v for k, v in state.items() if last.get(k, MISSING) != v})
        r["copy_for_next_diff"] = best(lambda: dict(state))
        r["delta_pickle_20k"] = best(lambda: pickle.dumps({k: state[k] for k in dirty}, protocol=5))
        r["full_saveToSnapshot_and_pickle"] = best(lambda: pickle.dumps(tuple(state.items()), protocol=5))
        r["full_unpickle_and_restore"] = best(lambda: dict(pickle.loads(pickle.dumps(tuple(state.items()), protocol=5))))
        with tempfile.NamedTemporaryFile(delete=False) as f:
            path = f.name

        def snapshot():
            with open(path, "wb") as g:
                pickle.dump(state, g, protocol=5)
        r["compaction_snapshot_write"] = best(snapshot)
        r["snapshot_bytes"] = os.path.getsize(path)
        r["delta_bytes_20k_keys"] = len(pickle.dumps({k: state[k] for k in dirty}, protocol=5))
        os.unlink(path)
        out[keys] = r
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
