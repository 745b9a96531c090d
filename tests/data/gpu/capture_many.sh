#!/usr/bin/env bash
# A real many-launch report made by `flopscope profile` on the GPU (issue 18: real-size reports): a loop of small
# elementwise and reduction launches, profiled with flopscope's roofline set. A probe of 200 launches sizes the
# real run to about 200 s of profiling (869 launches on the H200). Run on the device after device_prep.sh's wheels
# are installed (its printed line, with `bash tests/data/gpu/capture_many.sh` in place of capture.sh); it writes
# $OUT/many.* (nvidia_h200/many_launches.* here). This is the script as it ran, from .whl/big.sh.
set -uo pipefail
cd /tmp
cat > many.py <<'PY'
"""Many small launches, as a training loop's elementwise and reduction kernels make them."""
import sys
import torch
x = torch.randn(1 << 16, device="cuda")
w = torch.randn(1 << 16, device="cuda")
torch.cuda.synchronize()
for i in range(int(sys.argv[1])):
    x.mul_(0.999).add_(w, alpha=0.001)
    if i % 8 == 0:
        s = x.sum()
torch.cuda.synchronize()
print("done", float(x.sum()))
PY
export FLOPSCOPE_HOME=/tmp/fh
t0=$SECONDS
timeout 150 flopscope profile --no-tui --clock-control none --name probe --launch-count 200 -- python3 many.py 5000 > $OUT/probe.stream.txt 2>&1
echo "probe exit=$? seconds=$((SECONDS - t0))"
probe=$((SECONDS - t0))
n=$(( 200 * 200 / (probe > 1 ? probe : 1) ))
n=$(( n > 5000 ? 5000 : n )); n=$(( n < 300 ? 300 : n ))
echo "launches for the big run: $n"
t0=$SECONDS
timeout 300 flopscope profile --no-tui --clock-control none --name many --launch-count $n -- python3 many.py 5000 > $OUT/many.stream.txt 2>&1
echo "many exit=$? seconds=$((SECONDS - t0))"
ls -la /tmp/fh/runs/many/ 2>&1
t0=$SECONDS
xz -T16 -9 -c /tmp/fh/runs/many/report.ncu-rep > $OUT/many.ncu-rep.xz && echo "xz seconds=$((SECONDS - t0))"
cp /tmp/fh/runs/many/ncu.log $OUT/many.ncu.log 2>/dev/null
cp /tmp/fh/runs/many/run.json $OUT/many.run.json 2>/dev/null
ls -la $OUT
