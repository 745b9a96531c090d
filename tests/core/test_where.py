"""`core/table/where.py`: filter expressions over a kernels table (the app's live filter,
`--where`). Each mask is held to one written here with plain pandas comparisons on the same real
table, never to the engine's own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from flopscope.core import read_report
from flopscope.core.table.where import WhereError, looks_like_where, names_of, parse, quantity

from ..conftest import fixture_path

DEMO = Path(__file__).parents[2] / "tui" / "examples" / "train_transformer_bf16_bs8.ncu-rep.xz"
# Names as a view adds them (titles, words people say) on top of the --json keys.
TITLES = {
    "time": "duration_s",
    "prec": "precision",
    "bound": "roof",
    "%roof": "pct_of_roof",
    "dram b/s": "dram_bytes_per_s",
}


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return read_report(DEMO).group("name")


def _mask(text: str, rows: pd.DataFrame, **shown) -> np.ndarray:
    return parse(text, names_of(rows.columns) | TITLES).mask(rows, shown)


def _known(series: pd.Series) -> pd.Series:
    return series.notna()


def test_numbers_with_units_against_pandas(rows):
    d = rows["duration_s"]
    cases = {
        "time > 5us": d > 5e-6,
        "duration_s >= 20us": d >= 20e-6,
        "time < 0.003ms": d < 3e-6,
        "time <= 1500ns": d <= 1.5e-6,
        "dram_bytes >= 1MB": rows["dram_bytes"] >= 1e6,
        "pct_of_roof < 10": rows["pct_of_roof"] < 10,
        "%Roof >= 20%": rows["pct_of_roof"] >= 20,
        "DRAM B/s > 1GB/s": rows["dram_bytes_per_s"] > 1e9,
        "flop_per_s > 1TFLOP/s": rows["flop_per_s"] > 1e12,
        "flop > 5G": rows["flop"] > 5e9,
        "count == 3": rows["count"] == 3,
        "count != 3": _known(rows["count"]) & (rows["count"] != 3),
        "sm_clock_hz > 1.5GHz": rows["sm_clock_hz"] > 1.5e9,
    }
    for text, expected in cases.items():
        assert _mask(text, rows).tolist() == expected.fillna(False).tolist(), text
    assert 0 < (d > 5e-6).sum() < len(rows)  # the table tells the cases apart


def test_text_equality_regex_and_the_shown_words(rows):
    roof = rows["roof"].astype(object)
    precision = rows["precision"].astype(str)
    assert _mask("bound == dram", rows).tolist() == (roof == "dram").tolist()
    # any case, `=` as `==`
    assert _mask("bound = DRAM", rows).tolist() == (roof == "dram").tolist()
    # `memory` is any memory level, as `bound:memory` and the export's `bound` column say
    assert _mask("bound == memory", rows).tolist() == roof.isin(["dram", "l2", "l1"]).tolist()
    assert _mask("bound != dram", rows).tolist() == (roof.notna() & (roof != "dram")).tolist()
    # `tensor_bf16` is shown `TC bf16`: the regex matches what the table shows too
    shown = {"precision": lambda v: str(v).replace("tensor_", "TC ")}
    tensor = precision.str.contains("tensor_").tolist()
    assert _mask("prec ~ tc", rows, **shown).tolist() == tensor
    assert any(tensor) and not all(tensor)
    gemm = rows["kernel"].astype(str).str.contains("nvjet", case=False)
    assert _mask("kernel ~ NVJET", rows).tolist() == gemm.tolist()
    assert _mask("kernel !~ nvjet", rows).tolist() == (~gemm).tolist()
    assert (
        _mask("kernel ~ 'nvjet.*NNT$'", rows).tolist()
        == rows["kernel"].astype(str).str.contains("nvjet.*NNT$", case=False).tolist()
    )


def test_and_or_not_and_parentheses(rows):
    d, roof, roofs = rows["duration_s"], rows["pct_of_roof"], rows["roof"].astype(object)
    text = "bound == dram and time > 1us and %Roof < 20 or not (time > 2us)"
    expected = ((roof < 20) & (roofs == "dram") & (d > 1e-6)) | ~(d > 2e-6)
    assert _mask(text, rows).tolist() == expected.tolist()
    grouped = "(bound == dram or bound == l2) and not %Roof >= 10"
    expected = (roofs.isin(["dram", "l2"])) & ~(roof >= 10)
    assert _mask(grouped, rows).tolist() == expected.tolist()


def test_unknown_values_match_no_comparison():
    rows = pd.DataFrame({"x": [1.0, np.nan, 3.0], "t": pd.Categorical(["a", None, "b"])})
    assert _mask("x != 1", rows).tolist() == [False, False, True]
    assert _mask("x < 5", rows).tolist() == [True, False, True]
    assert _mask("t != a", rows).tolist() == [False, False, True]
    # not: of the rows kept, the rest
    assert _mask("not x < 5", rows).tolist() == [False, True, False]


@pytest.mark.parametrize(
    ("text", "problem", "position"),
    [
        ("tme > 5us", "no column 'tme'", 0),
        ("time > 5xx", "unknown unit 'xx'", 8),
        ("time > 1GB", "1GB is in B, time in s", 7),
        ("time >", "ends too soon after '>'", 6),
        ("time > 5us and", "ends too soon after 'and'", 14),
        ("(time > 5us", "'(' is never closed", 0),
        ("time > 5us)", "')' closes no '('", 10),
        ("time > 5 us", "a space before the unit 'us'", 9),
        ("time > 5us kernel", "unexpected 'kernel'", 11),
        ("1us < time < 5us", "one comparison at a time", 11),
        ("5us < time", "expected a column at '5us'", 0),
        ("time", "expected a comparison", 0),
        ("time == == 3", "expected a value after '=='", 8),
    ],
)
def test_errors_name_the_problem_and_its_position(text, problem, position):
    with pytest.raises(WhereError) as caught:
        parse(text, {"time": "duration_s", "kernel": "kernel"})
    assert problem in caught.value.problem
    assert caught.value.position == position


def test_errors_a_value_meets_at_evaluation(rows):
    names = names_of(rows.columns) | TITLES
    for text, problem, position in [
        ("kernel > 3", "kernel is text", 9),
        ("time ~ x", "time is a number", 7),
        ("time > fast", "time is a number, not 'fast'", 7),
        ("kernel ~ [", "not a regular expression", 9),
    ]:
        with pytest.raises(WhereError) as caught:
            parse(text, names).mask(rows)
        assert problem in caught.value.problem, text
        assert caught.value.position == position, text


def test_no_eval_anything_but_comparisons_is_refused():
    names = {"time": "duration_s"}
    for text in ["__import__('os')", "time > 5us + 1", "time.real > 1", "[time] > 1"]:
        with pytest.raises(WhereError):
            parse(text, names)


def test_units():
    assert quantity("us") == (1e-6, "s")
    assert quantity("ms") == (1e-3, "s")
    assert quantity("GB") == (1e9, "B")
    assert quantity("gb") == (1e9, "B")
    assert quantity("GB/s") == (1e9, "B/s")
    assert quantity("TFLOP/s") == (1e12, "FLOP/s")
    assert quantity("GHz") == (1e9, "Hz")
    assert quantity("k") == (1e3, "")
    assert quantity("%") == (1.0, "%")
    assert quantity("mB") is None  # milli or mega? neither is guessed
    assert quantity("furlong") is None


def test_what_reads_as_an_expression():
    names = {"time": "duration_s", "kernel": "kernel", "batch_size": "batch_size"}
    for text in [
        "time > 5us",
        "time>5us",
        "tme > 5us",
        "(time > 1us)",
        "not kernel ~ x",
        "kernel ~ gemm",
        "((not time<1",
    ]:
        assert looks_like_where(text, names), text
    # the name filters of before keep their meaning: a regex, a template, a parameter's value typed
    # whole
    for text in [
        "gemm",
        "gemm<float>",
        "batch_size=1",
        "bound:memory",
        "sm90_xmma",
        "(gemm|conv)",
        "(",
        "not gemm",
    ]:
        assert not looks_like_where(text, names), text


def test_a_real_launches_table_of_another_gpu():
    report = read_report(fixture_path("h800_sglang_flashattn_full.ncu-rep"))
    launches = report.group("launch")
    d = launches["duration_s"]
    assert (
        parse("time > 10us", names_of(launches.columns) | TITLES).mask(launches).tolist()
        == (d > 1e-5).tolist()
    )


def test_any_text_parses_or_is_one_where_error(rows):
    """Typed live, every prefix of every text reaches the parser: each one is an expression or a
    WhereError, never another exception (a traceback in the app, a crash in the CLI)."""
    import random

    names = names_of(rows.columns) | TITLES
    # fmt: off
    pieces = [
        "time", "%Roof", "kernel", " ", "(", ")", "'", '"', "!", "=", "==", "~", "<", ">", "5us",
        "1GB", "x", "and", "or", "not", "1e", ".", "-", "%", "µs", "[", "\\", "\t",
    ]
    # fmt: on
    chance = random.Random(43)
    texts = [
        "".join(chance.choice(pieces) for _ in range(chance.randint(1, 9))) for _ in range(3000)
    ]
    for text in [*texts, "time ! 3", "kernel == 'abc", 'prec ~ "tc', "!", "'"]:
        try:
            parse(text, names).mask(rows)
        except WhereError as err:
            assert 0 <= err.position <= len(text), text
