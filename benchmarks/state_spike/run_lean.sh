#!/bin/sh
# The lean plan run for the report (a busy shared 2-core machine): modes interleaved per K.
# usage: sh benchmarks/state_spike/run_lean.sh benchmarks/state_spike/results.jsonl
out=${1:-benchmarks/state_spike/results.jsonl}
cd "$(dirname "$0")/../.."
run() { PYTHONPATH=$PWD timeout 1200 .venv/bin/python -m benchmarks.state_spike.bench_state --mode $1 --keys $2 --batches 6 2>/dev/null | grep '^{' >> "$out"; }
for k in 500000 1000000; do for m in driver rdd-blob files files-diff; do run $m $k; done; done
run files-nocache 1000000
run rdd-keys 500000
