"""Every real ncu output in ../shared/fixtures/ncu parses, with its kernel count right
(SOURCES.md)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pandas as pd
import pytest
from flopscope.core import FlopscopeError, read_report
from flopscope.core.readers import read_metrics

from ..conftest import fixture_path
from ..helpers.real_files import report_of

# Kernel (launch) counts as SOURCES.md lists them.
KERNELS = {
    "h800_sglang_flashattn_full.ncu-rep": 5,
    "h100pcie_ee384_cub_agents_full.ncu-rep": 18,
    "a100pcie80_cutlass_gemm_full.ncu-rep": 3,
    "a100pcie40_cub_radixsort_154k_basic.ncu-rep": 154,
    "v100_ncar_miniweather_fp64_full.ncu-rep": 5,
    "t4_mlp_matadd_full.ncu-rep": 1,
    "rtx4090_torch_linear_sgemm.ncu-rep": 2,
    "a10_spyinfer_linear_105k_basic.ncu-rep": 105,
    "rtx5060ti_transpose_45k_basic.ncu-rep": 45,
    "b200_torch_sdpa_auto_raw.csv": 16,
    "v100_xplacer_cfd_details_nsight2020.log": 100,
    "t4_nsightful_copy_blocked_details.csv": 1,
    "h100pcie_robocache_cmdline_details.csv": 9,
    "rtx5090_dsocr_cutlass_gemm_details.csv": 1,
    "rtx5090_dsocr_cutlass_gemm_roofline_section.csv": 1,
    "v100_cutlass_gemm_nersc_flops_details.csv": 11,
    "a100_gemm_printfp_details.csv": 3,
    "rtx5070_win_bom_crlf_details.csv": 1,
    "b200_nvtx_apprange_details_sanitized.csv": 1,
}
FORMATS = {".ncu-rep": "ncu-rep", "_raw.csv": "csv-raw"}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_fixture_parses_with_its_kernel_count(name):
    report = report_of(fixture_path(name))
    assert len(report.kernels) == KERNELS[name]
    assert report.kernels["kernel_full"].str.len().gt(0).all()
    expected = next((f for suffix, f in FORMATS.items() if name.endswith(suffix)), "csv-details")
    assert report.meta.format == expected


def test_format_is_detected_by_content_not_extension(tmp_path):
    src = fixture_path("t4_mlp_matadd_full.ncu-rep")
    disguised = tmp_path / "looks_like.csv"
    disguised.write_bytes(src.read_bytes())
    assert read_report(disguised).meta.format == "ncu-rep"
    csv_src = fixture_path("b200_torch_sdpa_auto_raw.csv")
    renamed = tmp_path / "profile.ncu-rep"
    renamed.write_bytes(csv_src.read_bytes())
    assert read_report(renamed).meta.format == "csv-raw"


def test_broken_launch_is_kept_and_marked():
    report = report_of(fixture_path("h800_sglang_flashattn_full.ncu-rep"))
    flash = report.kernels[report.kernels["kernel"].str.startswith("flash_fwd_kernel")]
    assert len(flash) == 1
    assert flash["duration_s"].isna().all()
    assert report.summary().launches == 5


def test_nvtx_columns_of_details_layout():
    report = report_of(fixture_path("b200_nvtx_apprange_details_sanitized.csv"))
    # "0:<default domain>:compute_kernel:profile:none:none:none:none:none:none": Id and domain
    # before the name, six fields after it (the header's), a name may hold colons (`aten::mm`)
    assert report.kernels["nvtx"].iloc[0] == "compute_kernel:profile"
    assert report.kernels["process"].iloc[0] == "python (4242)"
    # 123480704 ns as printed in the file
    assert report.kernels["duration_s"].iloc[0] == pytest.approx(123480704e-9)


def test_bom_crlf_and_new_dram_metric_names():
    report = report_of(fixture_path("rtx5070_win_bom_crlf_details.csv"))
    row = report.kernels.iloc[0]
    assert row["dram_read_bytes"] == 53_261_312
    assert row["dram_write_bytes"] == 3_377_920
    assert row["dram_bytes"] == 53_261_312 + 3_377_920
    assert row["duration_s"] == pytest.approx(10_195_552e-9)
    # named in the program output before the CSV
    assert report.meta.gpu == "NVIDIA GeForce RTX 5070"


def test_identity_columns_from_ncu_rep():
    report = report_of(fixture_path("t4_mlp_matadd_full.ncu-rep"))
    row = report.kernels.iloc[0]
    assert (row["grid"], row["block"], row["registers"]) == ("(8, 63, 1)", "(16, 16, 1)", 18)
    assert row["gpu"] == "Tesla T4" and row["cc"] == "7.5"


def test_metric_tables_hold_si_units():
    frame, _ = read_metrics(fixture_path("rtx5090_dsocr_cutlass_gemm_details.csv"))
    row = frame.iloc[0]
    assert row["gpu__time_duration.sum"] == pytest.approx(404.70e-6)  # printed as 404.70 us
    assert row["dram__bytes_read.sum"] == pytest.approx(63.77e6)  # Mbyte
    assert row["dram__bytes_write.sum"] == pytest.approx(197.38e3)  # Kbyte
    assert row["smsp__cycles_elapsed.avg.per_second"] == pytest.approx(2.00e9)  # Ghz


@pytest.mark.parametrize(
    "name", ["rtx5070_win_bom_crlf_details.csv", "b200_torch_sdpa_auto_raw.csv"]
)
def test_utf16_csv_as_powershell_redirect_writes_it(tmp_path, name):
    """Windows PowerShell's `ncu --csv ... > out.csv` writes UTF-16 with a BOM: read it like the
    UTF-8 file."""
    src = fixture_path(name)
    text = src.read_bytes().decode("utf-8-sig")
    for encoding in ("utf-16-le", "utf-16-be"):
        path = tmp_path / f"{encoding}.csv"
        path.write_bytes("\ufeff".encode(encoding) + text.encode(encoding))
        assert path.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")
        got, want = read_report(path).kernels, read_report(src).kernels
        assert len(got) == KERNELS[name]
        pd.testing.assert_frame_equal(got, want)
    if name.startswith("rtx5070"):
        assert got.iloc[0]["dram_read_bytes"] == 53_261_312  # as printed in the file


def test_utf16_file_that_is_not_ncu_output_names_the_users_file(tmp_path):
    path = tmp_path / "notes.csv"
    path.write_text("hello,world\n", encoding="utf-16")
    with pytest.raises(FlopscopeError) as err:
        read_report(path)
    assert err.value.path == str(path) and "ID" in err.value.problem


# Device, stream and registers of launch 0 as the files print them (.ncu-rep: as `ncu --import F
# --csv --page raw` prints them, checked with ncu 2024.1).
IDS = {
    "t4_mlp_matadd_full.ncu-rep": (0, 7, 18),
    "a100pcie80_cutlass_gemm_full.ncu-rep": (1, 7, 188),
    "v100_ncar_miniweather_fp64_full.ncu-rep": (0, 14, 34),
    "b200_torch_sdpa_auto_raw.csv": (0, 7, 48),
    "t4_nsightful_copy_blocked_details.csv": (0, 7, 32),
    "v100_xplacer_cfd_details_nsight2020.log": (None, 7, 20),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_device_stream_registers_are_integers_from_every_reader(name):
    k = report_of(fixture_path(name)).kernels
    for col in ("device", "stream", "registers"):
        assert str(k[col].dtype) == "Int64", col
    if name in IDS:
        first = k.sort_values("launch_id").iloc[0]
        got = tuple(
            None if pd.isna(first[c]) else first[c] for c in ("device", "stream", "registers")
        )
        assert got == IDS[name]


def test_ncu_na_stream_is_missing_not_text():
    k = report_of(fixture_path("b200_nvtx_apprange_details_sanitized.csv")).kernels
    assert k["stream"].isna().all()  # the file prints Stream as "n/a"


def test_other_threads_stderr_survives_a_report_read(tmp_path):
    """ncu_report's log is kept off the terminal by pointing fd 2 elsewhere while a report is read.
    A sweep prints progress from other threads meanwhile: every such line still reaches stderr, and
    no absl line does."""
    script = tmp_path / "ticks.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys, threading, time
        from flopscope.core.readers import read_metrics
        stop, sent = False, 0
        def tick():
            global sent
            while not stop:
                sys.__stderr__.write("tick\\n"); sys.__stderr__.flush()
                sent += 1; time.sleep(0.005)
        t = threading.Thread(target=tick); t.start(); time.sleep(0.05)
        for cut in (False, True):
            try:
                whole = {str(fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep"))!r}
                read_metrics(whole if not cut else {str(tmp_path / "cut.ncu-rep")!r})
            except Exception:
                pass
        time.sleep(0.05); stop = True; t.join(); print(sent)
    """)
    )
    data = fixture_path("a100pcie40_cub_radixsort_154k_basic.ncu-rep").read_bytes()
    (tmp_path / "cut.ncu-rep").write_bytes(data[:1_667_324])  # makes ncu_report log parse errors
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.stderr.count("tick") == int(out.stdout) > 10
    assert "absl" not in out.stderr and "Can't parse" not in out.stderr


# ncu 2024.1's raw page of a100pcie80_cutlass_gemm_full.ncu-rep (`ncu -i ... --csv --page raw`): its
# NVTX cell starts with the launching thread's id, and ranges pushed without a domain are in
# "<default domain>".
NVTX_HEADER = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
NVTX_CELLS = [
    '266595  "<default domain>:Non-fused-GEMM:none:none:none:none:none:none" ',
    '266595  "<default domain>:Non-fused-GEMM:none:none:none:none:none:none" ',
    '266595  "<default domain>:Fused-GEMM:none:none:none:none:none:none" ',
]


def test_nvtx_ranges_read_alike_from_the_report_and_its_csv(tmp_path):
    """The .ncu-rep reader said '<default domain>:Fused-GEMM' (ncu_report names the default domain
    so) and the CSV reader '266595  "<default domain>:Fused-GEMM' (the thread id ahead of it): both
    say 'Fused-GEMM' now."""
    from ..helpers.raw_csv import launches, raw_csv

    rep = report_of(fixture_path("a100pcie80_cutlass_gemm_full.ncu-rep")).kernels
    assert list(rep["nvtx"]) == ["Non-fused-GEMM", "Non-fused-GEMM", "Fused-GEMM"]
    rows = launches(fixture_path("v100_cutlass_gemm_nersc_flops_details.csv"))[:3]
    path = tmp_path / "nvtx.csv"
    path.write_text(raw_csv(rows, extra_cols={NVTX_HEADER: NVTX_CELLS}))
    assert list(read_report(path).kernels["nvtx"]) == list(rep["nvtx"])
