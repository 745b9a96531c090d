#!/usr/bin/env bash
# Here, before a device call: wheels for the GPU machine's Python 3.12 (nothing can be fetched there) in
# .whl/ (git-ignored via .git/info/exclude), flopscope's own wheel among them. Then, on the device:
#   run(carry=[".whl"], command=<the line printed at the end, with PART a, then b>)
set -euo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p "$(git rev-parse --git-dir)/info"; grep -qsx "/.whl/" "$(git rev-parse --git-dir)/info/exclude" || echo "/.whl/" >> "$(git rev-parse --git-dir)/info/exclude"
rm -rf .whl && mkdir .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_25_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform any -d .whl \
  ncu-report platformdirs textual plotext mdit-py-plugins linkify-it-py uc-micro-py rich markdown-it-py mdurl
python3 -m pip wheel -q --no-deps -w .whl .
du -sh .whl
cat <<'CMD'
set -o pipefail; export PYTHONUNBUFFERED=1; python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH && DEST=/tmp/cap bash tests/data/gpu/capture.sh PART 2>&1 | tee $OUT/log_PART.txt
CMD
