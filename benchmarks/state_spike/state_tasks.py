"""Worker-side code of the state-store spike (issue 26, point 3): what a task of the running
count does under each candidate. Lives in an importable module (not __main__) so that the
module-level cache survives between tasks in a reused Python worker."""

import os
import pickle
import random
import time

HOT = 20_000
WORDS_PER_BATCH = 200_000
PACKET = 1000
MISSING = object()


def word(i: int) -> str:
    return "w%07d" % i


def part(target: int) -> int:
    """The shuffle's partition function (module-level: one id, so PythonPartitioners compare equal)."""
    return target


def generate(batch: int, keys: int, parts: int, index: int, _it):
    """Yield (target, packet of words) for upstream partition ``index`` of micro-batch ``batch``:
    batch 0 holds every one of ``keys`` keys once, later ones 200k words from the 20k hot keys."""
    if batch == 0:
        ids = range(index, keys, parts)
    else:
        rnd = random.Random(batch * 1000 + index)
        ids = [rnd.randrange(HOT) for _ in range(WORDS_PER_BATCH // parts)]
    packets = [[] for _ in range(parts)]
    for i in ids:
        target = i % parts
        packet = packets[target]
        packet.append(word(i))
        if len(packet) >= PACKET:
            yield target, packet
            packets[target] = packet = []
    for target, packet in enumerate(packets):
        if packet:
            yield target, packet


def count(state: dict, words: list, dirty=None) -> list:
    """The processor's work: a running count per key, one output per input word."""
    out = []
    get = state.get
    for w in words:
        c = get(w, 0) + 1
        state[w] = c
        out.append((w, c))
    if dirty is not None:
        dirty.update(words)
    return out


# ---------------------------------------------------------------- today: through the driver

def driverTask(restored, states, index, it):
    """Today's shape: unpickle the whole saved state, restore every key, run, save every key,
    pickle it, hand it to the driver by an accumulator."""
    t0 = time.process_time()
    packed = restored.value.get(index) if restored is not None else None
    entries = pickle.loads(packed) if packed else ()
    state = {}
    for k, v in entries:  # restoreFromSnapshot of every entry
        state[k] = v
    t1 = time.process_time()
    n = 0
    for _target, words in it:
        out = count(state, words)
        n += len(out)
        yield len(out)
    t2 = time.process_time()
    saved = tuple(state.items())  # saveToSnapshot of every key
    packed = pickle.dumps(saved, protocol=pickle.HIGHEST_PROTOCOL)
    states.add({index: packed})
    t3 = time.process_time()
    yield ("T", t1 - t0, t2 - t1, t3 - t2)


# ---------------------------------------------------------------- (a) persisted state RDD

def rddTask(layout, timings, index, it):
    """Candidate (a): partition i of union(previous state RDD, shuffled input): the state's
    records come first. ``layout`` 'blob': one ('S', dict) record; 'keys': ('K', key, count)
    per key. Yields ('O', n) per output batch, then the new state's records, then timings."""
    t0 = time.process_time()
    state = None
    n = 0
    tRestore = tRun = 0.0
    for record in it:
        tag = record[0]
        if tag == "S":
            state = record[1]
            continue
        if tag == "K":
            if state is None:
                state = {}
            state[record[1]] = record[2]
            continue
        if state is None:
            state = {}
        if not tRestore:
            tRestore = time.process_time() - t0
            tStart = time.process_time()
        out = count(state, record[1])
        n += len(out)
        yield ("O", len(out))
    if state is None:
        state = {}
    if not tRestore:
        tRestore, tStart = time.process_time() - t0, time.process_time()
    tRun = time.process_time() - tStart
    t2 = time.process_time()
    if layout == "blob":
        yield ("S", state)
    else:
        for k, v in state.items():
            yield ("K", k, v)
    timings.add({index: ("T", tRestore, tRun, time.process_time() - t2)})


def isOutput(record) -> bool:
    return record[0] == "O"


def isState(record) -> bool:
    return record[0] in ("S", "K")


def isTiming(record) -> bool:
    return record[0] == "T"


# ---------------------------------------------------------------- (b) files + worker cache

_CACHE: dict = {}
"""(query, vertex, index) -> (version, live state, copy of the last saved state or None)."""


def _path(root, vertex, index, version, kind):
    return os.path.join(root, vertex, str(index), f"{version}.{kind}")


def _writeAtomically(path, obj) -> int:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)  # a retried or speculative attempt writes the same bytes; last rename wins
    return len(data)


def _loadFromFiles(root, vertex, index, version):
    """Return the state at ``version`` from the latest snapshot at or below it plus deltas."""
    base, v = {}, version
    while v > 0 and not os.path.exists(_path(root, vertex, index, v, "snapshot")):
        v -= 1
    if v > 0:
        with open(_path(root, vertex, index, v, "snapshot"), "rb") as f:
            base = pickle.load(f)
    return _replay(root, vertex, index, base, v, version)


def _replay(root, vertex, index, state, fromVersion, toVersion):
    for v in range(fromVersion + 1, toVersion + 1):
        path = _path(root, vertex, index, v, "delta")
        if os.path.exists(path):
            with open(path, "rb") as f:
                changed, removed = pickle.load(f)
            state.update(changed)
            for k in removed:
                state.pop(k, None)
    return state


def load(conf, index, version):
    """The seam's load: the live state of processor ``index`` at ``version``; from this
    worker's cache if it holds that version (or an older one: catch up by the deltas), else
    from the files. Returns (state, how: 'hit' | 'stale' | 'miss')."""
    key = (conf["query"], conf["vertex"], index)
    entry = _CACHE.pop(key, None) if conf["cache"] else None  # popped: a failed task leaves none
    if entry is not None and entry[0] == version:
        return entry, "hit"
    if entry is not None and entry[0] < version:
        state = _replay(conf["root"], conf["vertex"], index, entry[1], entry[0], version)
        return (version, state, None), "stale"
    state = _loadFromFiles(conf["root"], conf["vertex"], index, version)
    return (version, state, None), "miss"


def save(conf, index, version, state, dirty, lastSaved):
    """The seam's save: write the delta of ``version`` (the changed keys), now and then a full
    snapshot, and keep the live state in this worker's cache. Returns bytes written."""
    root, vertex = conf["root"], conf["vertex"]
    if conf["track"] == "dirty":
        changed = {k: state[k] for k in dirty}
    else:  # "diff": the runtime compares the processor's saved entries with the last version's
        if lastSaved is None:
            lastSaved = {}
        changed = {k: v for k, v in state.items() if lastSaved.get(k, MISSING) != v}
        removed = [k for k in lastSaved if k not in state]
    written = _writeAtomically(_path(root, vertex, index, version, "delta"), (changed, [] if conf["track"] == "dirty" else removed))
    every = conf["snapshotEvery"]
    if every and (version + index) % every == 0:  # staggered over the partitions
        written += _writeAtomically(_path(root, vertex, index, version, "snapshot"), state)
    if conf["cache"]:
        _CACHE[(conf["query"], vertex, index)] = (version, state, dict(state) if conf["track"] == "diff" else None)
    return written


def filesTask(conf, version, index, it):
    """Candidate (b): load version-1, run, save version."""
    t0 = time.process_time()
    (_, state, lastSaved), how = load(conf, index, version - 1)
    if conf["track"] == "diff" and lastSaved is None:
        lastSaved = dict(state)
    t1 = time.process_time()
    dirty = set() if conf["track"] == "dirty" else None
    for _target, words in it:
        out = count(state, words, dirty)
        yield len(out)
    t2 = time.process_time()
    written = save(conf, index, version, state, dirty, lastSaved)
    t3 = time.process_time()
    yield ("T", t1 - t0, t2 - t1, t3 - t2, how, written, os.getpid(), len(_CACHE))
