"""ReportMeta, the typed meta every view reads: its JSON object is the stored and `--json` format,
unchanged."""

from __future__ import annotations

import json

from flopscope.core import read_report
from flopscope.core.export.write import run_meta
from flopscope.core.report.meta import ReportMeta

from ..conftest import fixture_path
from ..helpers.cli import run_cli

# `report --json`'s meta keys, in the order the untyped meta dict always printed them (read from a
# saved output of the build before ReportMeta: a script diffing two outputs sees no change).
KEYS = [
    "source",
    "format",
    "reader_note",
    "captured",
    "gpu",
    "gpu_database_key",
    "gpu_database_name",
    "gpu_source",
    "gpus",
    "compute_capability",
    "launches",
    "metrics_collected",
    "missing",
    "convention",
    "params",
    "summary",
    "ceilings",
    "over_ceiling",
    "fma_convention",
    "columns",
]


def test_meta_round_trips_through_its_json_object():
    report = read_report(fixture_path("a100pcie80_cutlass_gemm_full.ncu-rep"), gpu="a100-sxm4-80gb")
    text = json.dumps(report.meta.to_dict())
    assert ReportMeta.from_dict(json.loads(text)) == report.meta
    assert list(run_meta(report)) == KEYS


def test_report_json_prints_the_meta_fields_with_their_values(tmp_path):
    out = run_cli(
        "report", fixture_path("t4_mlp_matadd_full.ncu-rep"), "--json", "--no-cache", home=tmp_path
    )
    meta = json.loads(out.stdout)["meta"]
    assert list(meta) == KEYS
    assert (meta["format"], meta["gpu"], meta["gpu_source"], meta["compute_capability"]) == (
        "ncu-rep",
        "Tesla T4",
        "report",
        "7.5",
    )
    assert meta["gpus"] == [
        {
            "name": "Tesla T4",
            "database_key": "t4",
            "compute_capability": "7.5",
            "launches": meta["launches"],
            "gpu_source": "report",
        }
    ]
    assert meta["missing"] == [
        {
            "column": "l1_bytes",
            "launches": 1,
            "problem": "l1_bytes not collected for 1 launch(es)",
            "fix": "ncu --metrics l1tex__t_bytes.sum",
        }
    ]
