#!/usr/bin/env bash
# Unpack (not install) Nsight Compute's command line from Debian's non-free archive into DEST (default
# .ci/ncu) and print the ncu binary's path. Without a GPU, ncu still imports reports and parses its
# arguments, so tests run those against the real thing (FLOPSCOPE_REAL_NCU). Needs apt-get and dpkg-deb.
set -euo pipefail
dest=${1:-.ci/ncu}
pkg=nsight-compute-target
version=2024.1.1.4~12.4.1-2  # the version tests/data/ncu_cli was captured with
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "deb http://deb.debian.org/debian trixie non-free" > "$work/sources.list"
mkdir -p "$work/lists/partial" "$dest"
apt=(apt-get -qq -o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=- \
     -o "Dir::State::Lists=$work/lists" -o APT::Sandbox::User=root)
"${apt[@]}" update >&2
# Pinned: tests compare with messages this version printed (tests/data/ncu_cli); no silent upgrade.
# The section files (what the details page shows) come from the host package; only they are kept of it.
(cd "$work" && "${apt[@]}" download "$pkg=$version" "nsight-compute=$version" >&2)
dpkg-deb -x "$work"/"$pkg"_*.deb "$dest"
ncu=$(find "$dest" -type f -name ncu -path '*target*' | head -1)
dpkg-deb --fsys-tarfile "$work"/nsight-compute_*.deb | tar -x -C "$work" --wildcards './usr/lib/*/nsight-compute/sections/*'
rm -rf "$(dirname "$ncu")/../../sections"
mv "$(find "$work/usr" -type d -name sections | head -1)" "$(dirname "$ncu")/../../sections"
"$ncu" --version >&2
realpath "$ncu"
