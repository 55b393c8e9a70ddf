"""State-store spike (issue 26, point 3): a running count per key over micro-batches of 200k
words touching the same 20k keys, with K keys held, under today's shape (whole state through
the driver) and the candidates (a) persisted co-partitioned state RDD and (b) task-written
files with a Python-worker cache. One mode and one K per process; prints one JSON line.

    python -m benchmarks.state_spike.bench_state --mode files --keys 500000
"""

import argparse
import json
import os
import pickle
import shutil
import statistics
import tempfile
import time

from pyspark import SparkConf, SparkContext, StorageLevel
from pyspark.accumulators import AccumulatorParam

from benchmarks.state_spike import state_tasks as T


class DictAcc(AccumulatorParam):
    def zero(self, value):
        return {}

    def addInPlace(self, a, b):
        a.update(b)
        return a


def rss(pid):
    """Return the resident memory of process ``pid`` in bytes (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", required=True,
                    choices=["driver", "rdd-blob", "rdd-keys", "files", "files-nocache", "files-diff"])
    ap.add_argument("--keys", type=int, default=20_000)
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--parts", type=int, default=2)
    ap.add_argument("--truncate-every", type=int, default=10, help="(a): localCheckpoint every N batches")
    ap.add_argument("--snapshot-every", type=int, default=10, help="(b): full snapshot every N versions")
    ap.add_argument("--reuse", default="true")
    args = ap.parse_args()

    conf = (SparkConf().setMaster(f"local[{args.parts}]").setAppName("state-spike")
            .set("spark.ui.enabled", "false").set("spark.python.worker.reuse", args.reuse)
            .set("spark.driver.memory", "4g").set("spark.ui.showConsoleProgress", "false"))
    sc = SparkContext(conf=conf)
    sc.setLogLevel("ERROR")
    jvmPid = sc._jvm.java.lang.ProcessHandle.current().pid()
    root = tempfile.mkdtemp(prefix="spike-state-")
    P, K = args.parts, args.keys
    times, phases, ckptBytes, hows, pids, rssLog = [], [], [], [], set(), []
    restored = None  # driver mode: broadcast of index -> packed state
    stateRdd = prevCombined = None
    unionClass = None
    fconf = dict(query="q1", vertex="count", root=root, cache=args.mode != "files-nocache",
                 track="diff" if args.mode == "files-diff" else "dirty", snapshotEvery=args.snapshot_every)

    for batch in range(args.batches + 1):
        t0 = time.perf_counter()
        gen = sc.parallelize(range(P), P).mapPartitionsWithIndex(
            lambda i, it, b=batch: T.generate(b, K, P, i, it))
        shuffled = gen.partitionBy(P, T.part)
        if args.mode == "driver":
            states = sc.accumulator({}, DictAcc())  # a new one per micro-batch, as sparkjet does
            rdd = shuffled.mapPartitionsWithIndex(lambda i, it, r=restored, s=states: T.driverTask(r, s, i, it))
            res = rdd.collect()
            timing = [r for r in res if isinstance(r, tuple)]
            saved = dict(states.value)
            path = os.path.join(root, f"{batch}.states")
            with open(path, "wb") as f:  # the driver pickles every processor's state to the checkpoint
                pickle.dump(saved, f, protocol=pickle.HIGHEST_PROTOCOL)
            ckptBytes.append(os.path.getsize(path))
            if restored is not None:
                restored.destroy()
            restored = sc.broadcast(saved)
        elif args.mode.startswith("rdd"):
            layout = args.mode.split("-")[1]
            source = sc.union([stateRdd, shuffled]) if stateRdd is not None else shuffled
            if stateRdd is not None and unionClass is None:
                unionClass = source._jrdd.rdd().getClass().getSimpleName()
                prefs = [str(sc._jsc.sc().getPreferredLocs(source._jrdd.rdd(), i)) for i in range(P)]
            timings = sc.accumulator({}, DictAcc())
            combined = source.mapPartitionsWithIndex(
                lambda i, it, l=layout, a=timings: T.rddTask(l, a, i, it), preservesPartitioning=True
            ).persist(StorageLevel.MEMORY_AND_DISK)
            if batch % args.truncate_every == 0 and batch:
                combined.localCheckpoint()
            outputs = combined.filter(T.isOutput).map(lambda r: r[1]).sum()
            timing = list(timings.value.values())
            newState = combined.filter(T.isState)  # filter keeps the partitioner
            if prevCombined is not None:
                prevCombined.unpersist()
            prevCombined, stateRdd = combined, newState
            ckptBytes.append(0)
        else:
            rdd = shuffled.mapPartitionsWithIndex(lambda i, it, v=batch + 1: T.filesTask(fconf, v, i, it))
            res = rdd.collect()
            timing = [r for r in res if isinstance(r, tuple)]
            with open(os.path.join(root, "commits"), "a") as f:  # the driver commits a version, nothing more
                f.write(f"{batch + 1}\n")
            ckptBytes.append(sum(t[5] for t in timing))
            if batch:
                hows.extend(t[4] for t in timing)
            pids.update(t[6] for t in timing)
        elapsed = time.perf_counter() - t0
        times.append(elapsed)
        phases.append([tuple(round(x, 3) for x in t[1:4]) for t in timing])
        rssLog.append((rss(os.getpid()), rss(jvmPid)))

    measured = times[2:]  # batch 0 loads K keys; batch 1 warms up
    out = dict(
        mode=args.mode, keys=K, parts=P, reuse=args.reuse,
        median_s=round(statistics.median(measured), 3), min_s=round(min(measured), 3),
        max_s=round(max(measured), 3), load_s=round(times[0], 3),
        phases_last=phases[-1], phases_median=[
            round(statistics.median(p[i][j] for p in phases[2:] if len(p) > i), 3)
            for i in range(P) for j in range(3)],
        ckpt_bytes_median=int(statistics.median(ckptBytes[2:])) if ckptBytes else 0,
        ckpt_bytes_max=max(ckptBytes[2:]) if ckptBytes else 0,
        driver_py_rss_mib=[round(rssLog[2][0] / 2**20), round(rssLog[-1][0] / 2**20)],
        driver_jvm_rss_mib=[round(rssLog[2][1] / 2**20), round(rssLog[-1][1] / 2**20)],
    )
    if hows:
        out["cache"] = {h: hows.count(h) for h in ("hit", "stale", "miss")}
        out["worker_pids"] = len(pids)
    if unionClass:
        out["union_class"] = unionClass
        out["union_prefs"] = prefs
    print(json.dumps(out))
    sc.stop()
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
