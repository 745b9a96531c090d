"""Build a real-size .ncu-rep from a real one: its result blocks repeated, as ncu appends one block
per launch.

    python benchmarks/make_big_report.py SOURCE.ncu-rep[.xz] OUT.ncu-rep --launches 10000

Each copy of a result block gets fresh, increasing APICallIDs and no string table of its own (the
copied results name their metrics by the ids the first copy's table defined), so NVIDIA's
ncu_report, `ncu --import` and flopscope all read it as a report of that many launches."""

from __future__ import annotations

import argparse
import lzma
import shutil
import struct
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_U32 = struct.Struct("<I")


def repeat_launches(source: Path, out: Path, copies: int = 0, launches: int = 0) -> Path:
    """Write `source` followed by its result blocks again, `copies` times in all (or until
    `launches`)."""
    from flopscope.core.readers.ncu_rep_stream import message_classes

    kinds = message_classes()
    data = source.read_bytes()
    blocks, last_call, per_copy = _result_blocks(data, kinds)
    copies = copies or -(-launches // per_copy)
    with out.open("wb") as dst:
        dst.write(data)
        for k in range(1, copies):
            for header, sources, results in blocks:
                header = kinds["BlockHeader"].FromString(header)
                header.ClearField("StringTable")
                moved = []
                for raw in results:
                    result = kinds["Result"].FromString(raw)
                    result.APICallID += k * (last_call + 1)
                    moved.append(result.SerializeToString())
                payload = b"".join(sources) + b"".join(_U32.pack(len(m)) + m for m in moved)
                header.PayloadSize = len(payload)
                raw_header = header.SerializeToString()
                dst.write(_U32.pack(len(raw_header)) + raw_header + payload)
    return out


def _result_blocks(data: bytes, kinds: dict) -> tuple[list, int, int]:
    """(header bytes, length-prefixed sources, result bytes) of every block with results; the
    largest APICallID; the number of results."""
    (size,) = _U32.unpack_from(data, 4)
    offset = 8 + size
    blocks, last_call, count = [], 0, 0
    while offset < len(data):
        (size,) = _U32.unpack_from(data, offset)
        raw_header = data[offset + 4 : offset + 4 + size]
        header = kinds["BlockHeader"].FromString(raw_header)
        offset += 4 + size
        sources, results = [], []
        cursor = offset
        for _ in range(header.NumSources):
            (n,) = _U32.unpack_from(data, cursor)
            sources.append(data[cursor : cursor + 4 + n])
            cursor += 4 + n
        for _ in range(header.NumResults):
            (n,) = _U32.unpack_from(data, cursor)
            results.append(data[cursor + 4 : cursor + 4 + n])
            last_call = max(last_call, kinds["Result"].FromString(results[-1]).APICallID)
            cursor += 4 + n
        if results:
            blocks.append((raw_header, sources, results))
            count += len(results)
        offset += header.PayloadSize
    return blocks, last_call, count


def plain_copy(source: Path, folder: Path) -> Path:
    """`source` itself, or for an .xz the report inside it, unpacked into `folder`."""
    if source.suffix != ".xz":
        return source
    out = folder / source.stem
    with lzma.open(source) as src, out.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--launches", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        repeat_launches(plain_copy(args.source, Path(folder)), args.out, launches=args.launches)
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
