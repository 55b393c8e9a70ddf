#!/bin/sh
# Runs every mode at each K, modes interleaved per K; one JSON line per run into $1.
# usage: sh benchmarks/state_spike/run_all.sh benchmarks/state_spike/results.jsonl [batches]
out=${1:-benchmarks/state_spike/results.jsonl}; batches=${2:-8}
cd "$(dirname "$0")/../.."
for k in 20000 500000 1000000; do
  for m in driver rdd-blob files files-diff files-nocache rdd-keys; do
    PYTHONPATH=$PWD timeout 1200 .venv/bin/python -m benchmarks.state_spike.bench_state --mode $m --keys $k --batches $batches 2>/dev/null | grep '^{' >> "$out"
  done
done
