#!/usr/bin/env bash
# The reference capture for tests/data/gpu/<gpu>/ (GPU-capture issue). Run on the GPU machine from the repo
# root: `bash tests/data/gpu/capture.sh`. Never changes clocks, power or MIG: ncu runs with --clock-control none.
# Writes $OUT/<gpu>/ (default tests/data/gpu): environment, metric catalogue, reports, raw CSV pages, streams.
set -uo pipefail
NCU=${NCU:-ncu}
PY=${PY:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' A-Z' '_a-z' | tr -cd 'a-z0-9_')
DIR=${OUT:-$HERE}/$GPU
mkdir -p "$DIR"
cd "$DIR"

{ nvidia-smi -q | head -60; "$NCU" --version; $PY -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; } > environment.txt 2>&1
"$NCU" --query-metrics > query_metrics.txt 2>&1; gzip -f query_metrics.txt

# The engine's default set (flopscope profile --metrics roofline) plus every tensor op counter this GPU has.
BASE=$($PY -c "from flopscope.core.ncu_command import METRIC_SETS; print(','.join(METRIC_SETS['roofline']))")
TENSOR=$(zcat query_metrics.txt.gz | grep -oE '^sm__(ops_path_tensor_[a-z0-9_]+|inst_executed_pipe_tensor[a-z0-9_]*)' | sort -u | sed 's/$/.sum/' | paste -sd, -)
METRICS="$BASE${TENSOR:+,$TENSOR}"
echo "$METRICS" > metrics.txt

prof() {  # prof NAME ARGS...: one report, its raw CSV page, and ncu's console stream
  local name=$1; shift
  "$NCU" --clock-control none --nvtx --nvtx-include 'measure/' --metrics "$METRICS" --export "$name" \
    --force-overwrite "$PY" "$HERE/workloads.py" "$@" > "$name.stream.txt" 2>&1
  "$NCU" --import "$name.ncu-rep" --csv --page raw --print-units base > "$name.csv" 2>> "$name.stream.txt"
}

for dtype in fp64 fp32 tf32 fp16 bf16 fp8; do
  prof "gemm_${dtype}_4096x4096x4096" gemm --dtype $dtype --m 4096 --n 4096 --k 4096
  prof "gemm_${dtype}_1000x1500x700" gemm --dtype $dtype --m 1000 --n 1500 --k 700
done
for bs in 1 8 16 32 64 1024; do prof "linear_bs$bs" linear --batch-size $bs; done
for mode in half2 half; do prof "elementwise_$mode" elementwise --mode $mode; done
for model in resnet transformer; do
  for bs in 8 32; do prof "train_${model}_bs$bs" train --model $model --batch-size $bs; done
done
# A run that fails: a metric name that does not exist, kept with its exact console output.
"$NCU" --metrics does_not_exist__metric.sum "$PY" "$HERE/workloads.py" linear --batch-size 1 > fail_bad_metric.stream.txt 2>&1
echo "exit $?" >> fail_bad_metric.stream.txt
gzip -f ./*.csv
du -sh "$DIR"
