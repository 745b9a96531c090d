#!/usr/bin/env bash
# The reference capture for tests/data/gpu/<gpu>/ (GPU-capture issue), in two parts that each fit one device
# call (10 minutes):
#   bash tests/data/gpu/capture.sh a    # environment, metric catalogue, GEMM matrix, FMA weighting, failures,
#                                       # flopscope profile end to end, both CSV layouts from ncu itself
#   bash tests/data/gpu/capture.sh b    # the nn.Linear batch sweep, training steps with NVTX ranges
#   bash tests/data/gpu/capture.sh c    # bf16-autocast training steps (the bundled example)
#   bash tests/data/gpu/capture.sh d    # the FP32 batch-8 training steps again (backward module ranges fixed)
#   bash tests/data/gpu/capture.sh e    # doctor, ceilings (3x), the planner before and after a profile, the three
#                                       # roofs, and ncu's full set (rule results, estimated speedups)
#   bash tests/data/gpu/capture.sh h    # another GPU in one call: what a, c and e check that tests read
# Run from the repo root on the GPU machine with flopscope importable. Never changes clocks, power or MIG:
# ncu runs with --clock-control none. Writes $DEST/<gpu>/ (default: tests/data/gpu) and, when $OUT is set
# (the device tool), packs what this part wrote as $OUT/capture_<part>.tgz. Every step's timeout ends by
# $DEADLINE seconds (default 520, under the call's 600 with time to pack), so a slow step costs that step
# and later ones, never the part's data.
set -uo pipefail
PART=${1:?usage: capture.sh a|b}
NCU=${NCU:-ncu}
PY=${PY:-python3}
DEADLINE=${DEADLINE:-520}
HERE=$(cd "$(dirname "$0")" && pwd)
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z -' 'a-z__' | tr -cd 'a-z0-9_')
DIR=${DEST:-$HERE}/$GPU
mkdir -p "$DIR"
cd "$DIR" || exit 1
SUMMARY=summary_$PART.txt
: > "$SUMMARY"
touch ".started_$PART"

step() {  # step NAME TIMEOUT CMD...: run with what is left before the deadline; log exit code and seconds
  local name=$1 limit=$2; shift 2
  local left=$((DEADLINE - SECONDS))
  if (( left < 20 )); then echo "$name skipped (deadline)" >> "$SUMMARY"; return; fi
  local t0=$SECONDS
  timeout "$(( limit < left ? limit : left ))" "$@"
  echo "$name exit=$? seconds=$((SECONDS - t0))" >> "$SUMMARY"
}

prof() {  # prof NAME METRICS-FILE WORKLOAD-ARGS...: a report, its raw CSV page, ncu's console stream
  local name=$1 metrics=$2; shift 2
  step "$name" 240 bash -c '"$@" > "$0.stream.txt" 2>&1' "$name" \
    "$NCU" --clock-control none --profile-from-start off --nvtx --metrics "$(cat "$metrics")" \
    --export "$name" --force-overwrite "$PY" "$HERE/workloads.py" "$@"
  [[ -f $name.ncu-rep ]] && "$NCU" --import "$name.ncu-rep" --csv --page raw --print-units base \
    --print-metric-instances details > "$name.csv" 2>> "$name.stream.txt"
}

metric_list() {  # flopscope's roofline set + every tensor counter in this device's catalogue
  $PY -c "from flopscope.core.ncu_command import METRIC_SETS; print('\n'.join(METRIC_SETS['roofline']))"
  zcat query_metrics.txt.gz | grep -oE '^ *"?(sm|smsp)__(ops_path_tensor|inst_executed_pipe_tensor)[a-z0-9_]*' \
    | tr -d ' "' | sed 's/$/.sum/'
  # Per-opcode SASS counts (with selected modifiers, e.g. HFMA2.MMA moves apart from HFMA2 math).
  printf '%s\n' sass__thread_inst_executed_true_per_opcode sass__thread_inst_executed_true_per_opcode_with_modifier_all
}

probe_metrics() {  # drop, one retry each, what ncu says does not exist; what is dropped is itself a finding
  local list missing
  list=$(metric_list | grep . | sort -u | paste -sd, -)
  : > metrics_dropped.txt
  for _ in 1 2 3 4 5 6 7 8; do
    timeout 120 "$NCU" --clock-control none --metrics "$list" "$PY" "$HERE/workloads.py" gemm --dtype fp32 \
      --m 256 --n 256 --k 256 > probe.stream.txt 2>&1 && break
    missing=$(grep -oE 'Failed to find metric (regex:\^)?[a-z0-9_]+' probe.stream.txt | head -1 | sed -E 's/.* (regex:\^)?//')
    [[ -n $missing ]] || break
    echo "$missing" >> metrics_dropped.txt
    list=$(tr , '\n' <<< "$list" | grep -v -E "^${missing}(\.|$)" | paste -sd, -)
  done
  echo "$list" > metrics.txt
  # Still failing for another reason (no counter access, no driver): every profile would fail the same way.
  if ! grep -q "==PROF== Disconnected" probe.stream.txt || grep -q "==ERROR==" probe.stream.txt; then
    echo "probe failed: $(grep -m1 '==ERROR==' probe.stream.txt)" >> "$SUMMARY"
    return 1
  fi
}

prepare() {  # environment, catalogue, and the two metric lists: metrics.txt (every tensor counter, for the
  # counter studies) and metrics_flopscope.txt (what `flopscope profile` asks for, for the long training steps)
  { nvidia-smi -q | head -80; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem \
      --format=csv; "$NCU" --version; $PY -c "import torch; print('torch', torch.__version__, 'cuda',
      torch.version.cuda, torch.cuda.get_device_properties(0))"; } > environment.txt 2>&1
  step query_metrics 120 bash -c '"$0" --query-metrics > query_metrics.txt 2>&1' "$NCU"
  step query_metrics_all 120 bash -c '"$0" --query-metrics-mode all > query_metrics_all.txt 2>&1' "$NCU"
  gzip -f query_metrics.txt query_metrics_all.txt
  local t0=$SECONDS ok=0
  probe_metrics || ok=1
  echo "probe_metrics dropped=$(paste -sd, metrics_dropped.txt) seconds=$((SECONDS - t0))" >> "$SUMMARY"
  (( ok == 0 )) || { finish; exit 3; }
  $PY - > metrics_flopscope.txt <<'PY'
import gzip
from flopscope.core.ncu_catalogue import parse_catalogue, tensor_op_metrics
from flopscope.core.ncu_command import METRIC_SETS
dropped = set(open("metrics_dropped.txt").read().split())
names = METRIC_SETS["roofline"] + tensor_op_metrics(parse_catalogue(gzip.open("query_metrics.txt.gz", "rt").read()))
print(",".join(m for m in names if m.split(".")[0] not in dropped))
PY
}

part_a() {
  prepare
  for dtype in fp64 fp32 tf32 fp16 bf16; do
    prof "gemm_${dtype}_4096x4096x4096" metrics.txt gemm --dtype $dtype --m 4096 --n 4096 --k 4096
    prof "gemm_${dtype}_1000x1500x700" metrics.txt gemm --dtype $dtype --m 1000 --n 1500 --k 700
  done
  prof gemm_fp8_4096x4096x4096 metrics.txt gemm --dtype fp8 --m 4096 --n 4096 --k 4096
  prof gemm_fp8_1008x1520x704 metrics.txt gemm --dtype fp8 --m 1008 --n 1520 --k 704  # _scaled_mm needs multiples of 16
  for mode in half2 half float; do prof "elementwise_$mode" metrics.txt elementwise --mode $mode --iters 16; done
  # ncu's own details page of one report: the other CSV layout, from the same counters.
  "$NCU" --import gemm_bf16_4096x4096x4096.ncu-rep --csv --page details --print-units base \
    > gemm_bf16_4096x4096x4096.details.csv 2>&1
  # Failures, with their exact console output and exit codes.
  step fail_bad_metric 120 bash -c '"$@" > fail_bad_metric.stream.txt 2>&1; echo "exit $?" >> fail_bad_metric.stream.txt' \
    _ "$NCU" --metrics does_not_exist__metric.sum "$PY" "$HERE/workloads.py" linear --batch-size 1
  step fail_no_app 60 bash -c '"$@" > fail_no_app.stream.txt 2>&1; echo "exit $?" >> fail_no_app.stream.txt' \
    _ "$NCU" --metrics gpu__time_duration.sum ./no_such_program
  # flopscope profile end to end on this machine: ncu's argv as flopscope builds it.
  step flopscope_profile 240 bash -c 'FLOPSCOPE_HOME=$PWD/flopscope_home flopscope profile --no-tui \
    --clock-control none --name linear_bs8 -- "$0" "$1" linear --batch-size 8 > flopscope_profile.stream.txt 2>&1' \
    "$PY" "$HERE/workloads.py"
  unknown_metric
}

unknown_metric() {  # ncu 2025.3 profiles past a metric it does not know: the profile's own list (its run.json)
  # with the FFMA counter misspelled, exported; stdout and stderr apart, to see which stream ncu writes to
  local list
  list=$($PY -c "import json, sys; a = json.load(open(sys.argv[1]))['ncu_argv']; print(a[a.index('--metrics') + 1])" \
    flopscope_home/runs/linear_bs8/run.json) || return
  sed 's/op_ffma_pred_on\.sum,/op_ffma_pred_onn.sum,/' <<< "$list" > unknown_metric.metrics.txt
  step unknown_metric 240 bash -c '"$@" > unknown_metric.stream.txt 2> unknown_metric.stderr.txt
    echo "exit $?" >> unknown_metric.stream.txt' _ "$NCU" --export unknown_metric --force-overwrite \
    --metrics "$(cat unknown_metric.metrics.txt)" --clock-control none "$PY" "$HERE/workloads.py" linear --batch-size 8
  [[ -f unknown_metric.ncu-rep ]] && "$NCU" --import unknown_metric.ncu-rep --csv --page raw --print-units base \
    --print-metric-instances details > unknown_metric.csv
}

part_b() {  # the device machine is given back 30 s after a call, so part b prepares for itself
  [[ -f metrics_flopscope.txt ]] || prepare
  for bs in 1 8 16 32 64 1024; do prof "linear_bs$bs" metrics.txt linear --batch-size "$bs"; done
  for model in resnet transformer; do
    for bs in 8 32; do prof "train_${model}_bs$bs" metrics_flopscope.txt train --model $model --batch-size "$bs"; done
  done
}

part_c() {  # the bundled example: a bf16-autocast training step (cuBLAS nvjet kernels keep reports small)
  [[ -f metrics_flopscope.txt ]] || prepare
  for bs in 8 32; do
    prof "train_transformer_bf16_bs$bs" metrics_flopscope.txt train --model transformer --batch-size "$bs" --amp bf16
  done
}

part_d() {  # the FP32 batch-8 training steps again, after workloads.py's backward module ranges were fixed
  [[ -f metrics_flopscope.txt ]] || prepare
  for model in resnet transformer; do prof "train_${model}_bs8" metrics_flopscope.txt train --model $model --batch-size 8; done
}

part_e() {  # before and around profiling (doctor, ceilings, planner) and ncu's rule results, on this node
  export FLOPSCOPE_HOME=$PWD/home_e
  { nvidia-smi -q | head -80; "$NCU" --version; "$NCU" --list-sets; } > environment_e.txt 2>&1
  step doctor 90 bash -c 'flopscope doctor > doctor.txt 2>&1; echo "exit $?" >> doctor.txt'
  step doctor_json 90 bash -c 'flopscope doctor --json > doctor.json 2> doctor.stderr.txt; echo "exit $?" > doctor.exit.txt'
  # The probe's raw facts, what doctor judges: tests replay them.
  step doctor_facts 90 bash -c '"$0" -c "import json; from flopscope.core.doctor import probe
from flopscope.core.transport import LocalTransport
t = LocalTransport(); t.connect(); print(json.dumps(probe(t, \"ncu\"), indent=1))" > doctor_facts.json 2>&1' "$PY"
  for i in 1 2 3; do
    step "ceilings_$i" 150 bash -c "flopscope ceilings --json > ceilings_$i.json 2> ceilings_$i.stderr.txt"
  done
  step ceilings_list 60 bash -c 'flopscope ceilings --list > ceilings_list.txt 2>&1'
  local w=("$PY" "$HERE/workloads.py")
  step plan_before 60 bash -c 'flopscope profile --plan --clock-control none -- "$@" linear --batch-size 8 \
    > plan_before.txt 2>&1; echo "exit $?" >> plan_before.txt' _ "${w[@]}"
  step profile_linear 200 bash -c 'flopscope profile --no-tui --clock-control none --name linear_bs8 -- "$@" \
    linear --batch-size 8 > profile_linear.stream.txt 2>&1; echo "exit $?" >> profile_linear.stream.txt' _ "${w[@]}"
  step plan_after 60 bash -c 'flopscope profile --plan --clock-control none -- "$@" linear --batch-size 8 \
    > plan_after.txt 2>&1; echo "exit $?" >> plan_after.txt' _ "${w[@]}"
  for roof in clock datasheet measured; do
    step "roof_$roof" 60 bash -c 'flopscope report --roof "$0" "$FLOPSCOPE_HOME"/runs/linear_bs8/report.ncu-rep \
      > "roof_$0.txt" 2>&1; echo "exit $?" >> "roof_$0.txt"' "$roof"
  done
  # ncu's full set through flopscope (rule results and their estimated speedups, and its passes in ncu.log).
  step plan_full 60 bash -c 'flopscope profile --plan --metrics full --clock-control none -- "$@" gemm --dtype bf16 \
    --m 1000 --n 1500 --k 700 > plan_full.txt 2>&1; echo "exit $?" >> plan_full.txt' _ "${w[@]}"
  step profile_full 240 bash -c 'flopscope profile --no-tui --metrics full --clock-control none --name gemm_bf16_full \
    --ncu-args "--profile-from-start off" -- "$@" gemm --dtype bf16 --m 1000 --n 1500 --k 700 \
    > profile_full.stream.txt 2>&1; echo "exit $?" >> profile_full.stream.txt' _ "${w[@]}"
  local rep=$FLOPSCOPE_HOME/runs/gemm_bf16_full/report.ncu-rep
  if [[ -f $rep ]]; then
    "$NCU" --import "$rep" --page details --print-rule-details > gemm_bf16_full.details.txt 2>&1
    "$NCU" --import "$rep" --csv --page details --print-units base --print-rule-details \
      > gemm_bf16_full.details.csv 2>&1
    "$NCU" --import "$rep" --csv --page raw --print-units base > gemm_bf16_full.csv 2>&1
    flopscope report "$rep" > gemm_bf16_full.report.txt 2>&1
  fi
  # Reports leave the store for size: xz them beside it.
  find "$FLOPSCOPE_HOME" -name '*.ncu-rep' -exec xz -T16 -9 {} +
}

part_h() {  # a second GPU in one device call: the GEMM matrix at 4096^3, one odd shape, FMA weighting, the bf16
  # training step, and flopscope's own doctor, ceilings and profile on the node. Reports xz-compressed here.
  prepare
  for dtype in bf16 fp16 fp8 tf32 fp32 fp64; do
    prof "gemm_${dtype}_4096x4096x4096" metrics.txt gemm --dtype $dtype --m 4096 --n 4096 --k 4096
  done
  prof gemm_bf16_1000x1500x700 metrics.txt gemm --dtype bf16 --m 1000 --n 1500 --k 700
  for mode in half2 float; do prof "elementwise_$mode" metrics.txt elementwise --mode $mode --iters 16; done
  prof train_transformer_bf16_bs8 metrics_flopscope.txt train --model transformer --batch-size 8 --amp bf16
  export FLOPSCOPE_HOME=$PWD/flopscope_home
  step doctor 90 bash -c 'flopscope doctor > doctor.txt 2>&1; echo "exit $?" >> doctor.txt'
  step doctor_facts 90 bash -c '"$0" -c "import json; from flopscope.core.doctor import probe
from flopscope.core.transport import LocalTransport
t = LocalTransport(); t.connect(); print(json.dumps(probe(t, \"ncu\"), indent=1))" > doctor_facts.json 2>&1' "$PY"
  step ceilings 150 bash -c 'flopscope ceilings --json > ceilings.json 2> ceilings.stderr.txt'
  step flopscope_profile 120 bash -c 'flopscope profile --no-tui --clock-control none --name linear_bs8 -- "$0" "$1" \
    linear --batch-size 8 > flopscope_profile.stream.txt 2>&1; echo "exit $?" >> flopscope_profile.stream.txt' \
    "$PY" "$HERE/workloads.py"
  find . -name '*.ncu-rep' -exec xz -T16 -9 {} +
}

finish() {  # compress, report, and pack what this part wrote (the device returns files of 16 MiB at most)
  gzip -f ./*.csv 2>/dev/null
  cat "$SUMMARY"
  du -sh .
  if [[ -n ${OUT:-} ]]; then
    (cd "$(dirname "$DIR")" && find "$GPU" -type f -newer "$GPU/.started_$PART" -print0 \
      | tar czf "$OUT/capture_$PART.tgz" --null -T -)
    ls -l "$OUT/capture_$PART.tgz"
    (( $(stat -c %s "$OUT/capture_$PART.tgz") < 16 * 1024 * 1024 )) || echo "WARNING: over 16 MiB, will not come back"
  fi
}

"part_$PART"
finish
