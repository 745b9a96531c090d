"""Numbers for people: a fixed count of significant digits, no exponent where a prefix exists,
rounding that crosses a prefix boundary moves to the next prefix."""

import pytest
from flopscope.tui.presentation import format as fmt


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.2e12, "1.20 TB"),
        (999.96e9, "1.00 TB"),
        (999.4e9, "999 GB"),
        (123456, "123 kB"),
        (12, "12 B"),
        (0, "0 B"),
        (0.5, "0.500 B"),
        (-3.4e6, "-3.40 MB"),
        (1.64e18, "1.64 EB"),
        (float("nan"), ""),
    ],
)
def test_si_keeps_three_significant_digits(value, text):
    assert fmt.si(value, "B") == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.9996, "1.00 s"),
        (3.744e-6, "3.74 us"),
        (0.12, "120 ms"),
        (2120.0, "2120 s"),
        (34e-6, "34.0 us"),
        (0, "0 s"),
        (None, ""),
    ],
)
def test_seconds_never_print_an_exponent(value, text):
    assert fmt.seconds(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (9999.6, "1.00e+04"),
        (20.307, "20.3"),
        (4580.0, "4580"),
        (1.0, "1.00"),
        (0.0001234, "1.23e-04"),
    ],
)
def test_ratio(value, text):
    assert fmt.ratio(value) == text


@pytest.mark.parametrize("render", [fmt.si, fmt.seconds, fmt.integer, fmt.ratio, fmt.pct])
def test_infinity_reads_as_infinity_in_every_format(render):
    """They raised OverflowError (int(inf)) or printed `inf%`."""
    assert "∞" in render(float("inf")) and "-∞" in render(float("-inf"))


@pytest.mark.parametrize(
    ("label", "text"),
    [
        ("tensor_fp16_acc16+tensor_fp16", "TC fp16/acc16+TC fp16"),
        ("tensor_bf16", "TC bf16"),
        ("tensor_fp8_acc16+tensor_fp16_acc16+fp32", "TC fp8/acc16+TC fp16/acc16+fp32"),
        ("fp64+fp32", "fp64+fp32"),
        (None, ""),
        (float("nan"), ""),
    ],
)
def test_precision_labels_are_short_and_keep_every_part(label, text):
    assert fmt.precision(label) == text
    assert len(text) <= 32  # the Prec column's width: never cut
