"""Where a keyed stream processor's tasks run from one micro-batch to the next on a cluster (issue
26): a standalone cluster of two two-core workers on two loopback hosts (127.0.0.1 and
127.0.0.2), a running count per key at four partitions, one file a micro-batch. Printed: the share
of tasks that ran on the executor whose Python worker kept their processor alive (the one their
partition ran on the micro-batch before), and how many micro-batches each executor ran each
partition in.

``python -m benchmarks.home_locality [--micro-batches 12] [--partitions 4]``"""

import argparse
import collections
import os
import pathlib
import runpy
import tempfile
import time

PROJECT = pathlib.Path(__file__).resolve().parents[1]
TUTORIAL = runpy.run_path(str(PROJECT / "tutorials" / "06_running_on_a_spark_cluster.py"))
HOSTS = ("127.0.0.1", "127.0.0.2")
KEYS = 64
CORES = 2
"""Each worker's: its executor runs the tasks of the partitions it keeps at once, as a cluster's
executors have as many cores as partitions to run, so none waits out Spark's locality wait."""
STAYED_LINE = "stayed {stayed} of {total}, over {executors} executors"
"""The last line printed, for a test to read."""


def parseArgs(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.home_locality", description=__doc__.split("\n\n")[0])
    parser.add_argument("--micro-batches", dest="microBatches", type=int, default=12, help="micro-batches (default 12)")
    parser.add_argument("--partitions", type=int, default=4, help="the keyed stage's parallelism (default 4)")
    return parser.parse_args(argv)


def startCluster(directory: pathlib.Path):
    """Start tutorial 06's master on 127.0.0.1 and one worker of ``CORES`` cores on each of ``HOSTS``."""
    masterPort, webUiPort = TUTORIAL["freePort"](), TUTORIAL["freePort"]()
    masterUrl, webUi = f"spark://{HOSTS[0]}:{masterPort}", f"http://{HOSTS[0]}:{webUiPort}"
    environment = {"PYTHONPATH": str(PROJECT)}
    daemons = [TUTORIAL["startDaemon"](
        TUTORIAL["MASTER_CLASS"], ["--host", HOSTS[0], "--port", str(masterPort), "--webui-port", str(webUiPort)],
        directory / "master.log", environment,
    )]
    TUTORIAL["awaitMaster"](webUi, lambda status: status["status"] == "ALIVE", daemons, directory)
    for host in HOSTS:
        workerArgs = [masterUrl, "--host", host, "--cores", str(CORES), "--memory", TUTORIAL["WORKER_MEMORY"]]
        workerArgs += ["--webui-port", "0", "--work-dir", str(directory / host)]
        daemons.append(TUTORIAL["startDaemon"](
            TUTORIAL["WORKER_CLASS"], workerArgs, directory / f"{host}.log", {**environment, "SPARK_LOCAL_IP": host}
        ))
    TUTORIAL["awaitMaster"](webUi, lambda status: status["aliveworkers"] == len(HOSTS), daemons, directory)
    return masterUrl, daemons


def countWithExecutor(count: list, key: str, item: str) -> tuple:
    """Count ``key``; return it with its count and the executor's Python daemon (this worker's parent)."""
    count[0] += 1
    return key, count[0], os.getppid()


def main(argv: list[str] | None = None) -> None:
    args = parseArgs(argv)
    from sparkjet import Jet, JobConfig, Pipeline, ProcessingGuarantee, Sinks, Sources, wholeItem
    from sparkjet.planner import JobStatus
    from tests.cluster import awaitExecutors

    directory = pathlib.Path(tempfile.mkdtemp(prefix="home-locality-"))
    masterUrl, daemons = startCluster(directory)
    try:
        jet = Jet(master=masterUrl)
        master = jet.spark().sparkContext.master
        if master != masterUrl:  # a PYSPARK_GATEWAY_PORT inherited from a process with its own session
            raise RuntimeError(f"the session runs on {master}, not on this benchmark's cluster {masterUrl}")
        awaitExecutors(jet.spark(), len(HOSTS))
        watched = directory / "in"
        watched.mkdir()
        p = Pipeline.create()
        (p.readFrom(Sources.fileWatcher(str(watched))).withoutTimestamps()
          .groupingKey(wholeItem()).mapStateful(lambda: [0], countWithExecutor).setLocalParallelism(args.partitions)
          .writeTo(Sinks.list("home-locality")))
        config = JobConfig().setProcessingGuarantee(ProcessingGuarantee.EXACTLY_ONCE)
        job = jet.newJob(p, config.setCheckpointLocation(str(directory / "checkpoint")))
        results = jet.getList("home-locality")
        for number in range(args.microBatches):
            staged = directory / f".{number}.staged"
            staged.write_text("".join(f"k{key}\n" for key in range(KEYS)))
            os.rename(staged, watched / f"{number}.txt")
            while len(results) < KEYS * (number + 1):
                if job.getStatus() in (JobStatus.FAILED, JobStatus.COMPLETED):
                    job.join()  # raises what failed it
                time.sleep(0.1)
        job.cancel()
        report(list(results))
        jet.shutdown()
    finally:
        TUTORIAL["stopDaemons"](daemons)


def report(results: list) -> None:
    """Print the share of keys whose micro-batch ran on the executor of the micro-batch before."""
    byKey: dict[str, dict[int, int]] = collections.defaultdict(dict)
    for key, count, executor in results:
        byKey[key][count] = executor
    stayed = moved = 0
    for counts in byKey.values():
        for count in range(2, max(counts) + 1):
            stayed += counts[count] == counts[count - 1]
            moved += counts[count] != counts[count - 1]
    print(f"keys that stayed on their executor from one micro-batch to the next: {stayed} of {stayed + moved} "
          f"({stayed / (stayed + moved):.0%})")
    print(STAYED_LINE.format(stayed=stayed, total=stayed + moved, executors=len({entry[2] for entry in results})))


if __name__ == "__main__":
    main()
