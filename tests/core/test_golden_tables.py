"""Every golden table is self-consistent: its columns add up to its totals (within the rounding of the print).

This catches a golden file rewritten with `--update-golden` from output whose rows and totals disagree."""

import re
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"
COUNT_UNITS = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}  # advisor.core.units.format_count
BYTE_UNITS = {"B": 1.0, "KiB": 1024.0, "MiB": 1024.0**2, "GiB": 1024.0**3}  # advisor.core.units.format_bytes
PARTS = ("weights", "gradients", "optimizer_state", "activations", "temporaries", "inputs")


def parse(text: str, units: dict[str, float]) -> tuple[float, float]:
    """A printed figure -> (value, largest rounding error): two decimals of a unit are off by at most 0.005 units."""
    match = re.fullmatch(r"([\d.]+) ?([A-Za-z]*)", text.strip())
    assert match and match[2] in units, text
    number, unit = match[1], units[match[2]]
    return float(number) * unit, (0.005 * unit if "." in number else 0.0)


def add(figures: list[str], units: dict[str, float]) -> tuple[float, float]:
    parsed = [parse(figure, units) for figure in figures]
    return sum(value for value, _ in parsed), sum(error for _, error in parsed)


def assert_adds_up(parts: list[str], total: str, units: dict[str, float]) -> None:
    value, error = add(parts, units)
    expected, total_error = parse(total, units)
    assert abs(value - expected) <= error + total_error, (parts, total)


def layer_rows(lines: list[str]) -> list[list[str]]:
    """Cells of the layer table: the lines between the dashed rule and the first blank line."""
    start = next(i for i, line in enumerate(lines) if line.startswith("---")) + 1
    end = lines.index("", start)
    return [re.split(r"\s{2,}", line.strip()) for line in lines[start:end]]


def labelled(lines: list[str], label: str) -> str:
    line = next(line for line in lines if line.strip().startswith(label + " ") or line.startswith(label + ":"))
    return line.strip()[len(label) :].lstrip(": ")


@pytest.fixture(params=sorted(GOLDEN.glob("*.txt")), ids=lambda path: path.stem)
def lines(request: pytest.FixtureRequest) -> list[str]:
    path: Path = request.param
    return path.read_text().splitlines()


def test_the_golden_tables_are_there() -> None:
    assert len(list(GOLDEN.glob("*.txt"))) >= 4


def test_params_and_macs_columns_add_up_to_the_totals(lines: list[str]) -> None:
    rows = layer_rows(lines)
    params = labelled(lines, "Parameters").split()[0].replace(",", "")  # "20,037,642 (20.04M)" -> exact count
    assert_adds_up([row[-3] for row in rows], params, COUNT_UNITS)
    macs = labelled(lines, "Forward").split()[0]  # "5.13G MACs = ..."
    assert_adds_up([row[-2] for row in rows], macs, COUNT_UNITS)


def test_memory_parts_add_up_to_the_peak(lines: list[str]) -> None:
    peak, per_batch = labelled(lines, "peak").split("=")
    assert_adds_up([labelled(lines, part) for part in PARTS], peak, BYTE_UNITS)
    # "= 76.44 MiB fixed + 256 x 35.06 KiB per sample": fixed + batch x per-sample is the peak again
    match = re.fullmatch(r"\s*(.+) fixed \+ (\d+) x (.+) per sample", per_batch)
    assert match, per_batch
    fixed, fixed_error = parse(match[1], BYTE_UNITS)
    sample, sample_error = parse(match[3], BYTE_UNITS)
    total, total_error = parse(peak, BYTE_UNITS)
    batch = int(match[2])
    assert abs(fixed + batch * sample - total) <= fixed_error + batch * sample_error + total_error
