"""Every paper kernel in examples/ checks, with the expected ranges and shapes."""

from __future__ import annotations

import pytest

from tcir.frontend import parse

from frontend_helpers import EXAMPLES, ranges, shape

ROW = {"b": ("0", "B"), "n": ("0", "N")}
# file stem -> (output/temporary shapes, ranges of each statement)
EXPECTED: dict[str, tuple[dict[str, list[str]], list[dict[str, tuple[str, str]]]]] = {
    "mv": ({"C": ["M"]}, [{"i": ("0", "M")}, {"i": ("0", "M"), "k": ("0", "K")}]),
    "rowsum": ({"s": ["B"]}, [{"b": ("0", "B"), "k": ("0", "K")}]),
    "sgemm": ({"O": ["N", "K"]}, [{"i": ("0", "N"), "j": ("0", "K")},
                                 {"i": ("0", "N"), "j": ("0", "K"), "k": ("0", "M")}]),
    "fcrelu": ({"out": ["B", "O"]}, [{"i": ("0", "B"), "j": ("0", "O")},
                                     {"b": ("0", "B"), "o": ("0", "O"), "i": ("0", "I")},
                                     {"i": ("0", "B"), "j": ("0", "O")}]),
    "conv2d": ({"out": ["B", "OP", "H - KH + 1", "W - KW + 1"]}, [{
        "b": ("0", "B"), "op": ("0", "OP"), "h": ("0", "H - KH + 1"), "w": ("0", "W - KW + 1"),
        "ip": ("0", "IP"), "kh": ("0", "KH"), "kw": ("0", "KW")}]),
    "maxpool2x2": ({"out": ["B", "C", "H floordiv 2", "W floordiv 2"]}, [{
        "b": ("0", "B"), "c": ("0", "C"), "i": ("0", "H floordiv 2"), "j": ("0", "W floordiv 2"),
        "kw": ("0", "2"), "kh": ("0", "2")}]),
    "gather": ({"Z": ["A", "B"]}, [{"i": ("0", "A"), "j": ("0", "B")}]),
    "sconv2d": ({"O": ["N", "F", "(H - KH) floordiv sh + 1", "(W - KW) floordiv sw + 1"]}, [
        {"n": ("0", "N"), "f": ("0", "F"), "h": ("0", "(H - KH) floordiv sh + 1"),
         "w": ("0", "(W - KW) floordiv sw + 1")},
        {"n": ("0", "N"), "f": ("0", "F"), "h": ("0", "(H - KH) floordiv sh + 1"),
         "w": ("0", "(W - KW) floordiv sw + 1"), "c": ("0", "C"), "kh": ("0", "KH"),
         "kw": ("0", "KW")}]),
    "outerProductMM": ({"O": ["P", "S", "Q", "T"]}, [{
        "p": ("0", "P"), "s": ("0", "S"), "q": ("0", "Q"), "t": ("0", "T"), "r": ("0", "R")}]),
    "tmm": ({"C": ["M", "N"]}, [{"m": ("0", "M"), "n": ("0", "N"), "kk": ("0", "K")}]),
    "tbmm": ({"Z": ["B", "N", "K"]}, [{"b": ("0", "B"), "n": ("0", "N"), "k": ("0", "K"),
                                       "m": ("0", "M")}]),
    "gconv": ({"O": ["N", "G", "F", "H - KH + 1", "W - KW + 1"]}, [
        {"n": ("0", "N"), "g": ("0", "G"), "o": ("0", "F"), "h": ("0", "H - KH + 1"),
         "w": ("0", "W - KW + 1"), "i": ("0", "C"), "kh": ("0", "KH"), "kw": ("0", "KW")},
        {"n": ("0", "N"), "g": ("0", "G"), "o": ("0", "F"), "h": ("0", "H - KH + 1"),
         "w": ("0", "W - KW + 1")}]),
    "1LUT": ({"O1": ["B", "D"]}, [{"i": ("0", "B"), "j": ("0", "D"), "k": ("0", "L1")}]),
    "2LUT": ({"O1": ["B", "D"], "O2": ["B", "D"]}, [
        {"i": ("0", "B"), "j": ("0", "D"), "k": ("0", "L1")},
        {"i": ("0", "B"), "j": ("0", "D"), "k": ("0", "L2")}]),
    "MLP1": ({"O1": ["B", "N"]}, [{"b": ("0", "B"), "n": ("0", "N")},
                                  {"b": ("0", "B"), "n": ("0", "N"), "m": ("0", "M")},
                                  {"b": ("0", "B"), "n": ("0", "N")}]),
    # Row-wise chains (a row per b), a column sum, attention.
    "softmax": ({"Y": ["B", "N"], "mx": ["B"], "e": ["B", "N"], "s": ["B"]}, [ROW] * 4),
    "log_softmax": ({"Y": ["B", "N"], "mx": ["B"], "s": ["B"]}, [ROW] * 3),
    "layernorm": ({"Y": ["B", "N"], "mean": ["B"], "d": ["B", "N"], "var": ["B"]}, [ROW] * 4),
    "rmsnorm": ({"Y": ["B", "N"], "ms": ["B"]}, [ROW] * 2),
    "colsum": ({"S": ["N"]}, [{"n": ("0", "N"), "b": ("0", "B")}]),
    "attention": (
        {"O": ["B", "L", "D"], "S": ["B", "L", "L"], "M": ["B", "L"], "P": ["B", "L", "L"], "Z": ["B", "L"]},
        [{"b": ("0", "B"), "i": ("0", "L"), "j": ("0", "L"), "d": ("0", "D")}]
        + [{"b": ("0", "B"), "i": ("0", "L"), "j": ("0", "L")}] * 3
        + [{"b": ("0", "B"), "i": ("0", "L"), "d": ("0", "D"), "j": ("0", "L")}, {"b": ("0", "B"), "i": ("0", "L"), "d": ("0", "D")}],
    ),
    "MLP3": ({"O2": ["B", "O"], "O3": ["B", "P"], "O4": ["B", "Q"]}, [
        {"b": ("0", "B"), "o": ("0", "O")},
        {"b": ("0", "B"), "o": ("0", "O"), "n": ("0", "N")},
        {"b": ("0", "B"), "o": ("0", "O")},
        {"b": ("0", "B"), "p": ("0", "P")},
        {"b": ("0", "B"), "p": ("0", "P"), "o": ("0", "O")},
        {"b": ("0", "B"), "p": ("0", "P")},
        {"b": ("0", "B"), "q": ("0", "Q")},
        {"b": ("0", "B"), "q": ("0", "Q"), "p": ("0", "P")},
        {"b": ("0", "B"), "q": ("0", "Q")}]),
    "conv1d": ({"O": ["M - N + 1"]}, [{"i": ("0", "M - N + 1"), "x": ("0", "N")}]),
    "C3": ({"C3": ["B", "WY"]}, [{"b": ("0", "B"), "wy": ("0", "WY"), "wxx": ("0", "WX")}]),
}


def test_every_example_is_covered() -> None:
    assert {p.stem for p in EXAMPLES.glob("*.tc")} == set(EXPECTED)


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_example(stem: str) -> None:
    path = EXAMPLES / f"{stem}.tc"
    (d,) = parse(path.read_text(), str(path))
    assert d.name == stem
    shapes, stmt_ranges = EXPECTED[stem]
    assert {p.name: shape(d, p.name) for p in (*d.outputs, *d.temporaries)} == shapes
    assert [ranges(d, k) for k in range(len(d.stmts))] == stmt_ranges
    assert all(p.dtype == "float32" for p in d.outputs)


def test_sconv2d_scalar_size_params() -> None:
    (d,) = parse((EXAMPLES / "sconv2d.tc").read_text())
    assert d.size_params[-2:] == ["sh", "sw"] and d.scalar_size_params == {"sh", "sw"}


def test_all_examples_in_one_source() -> None:
    text = "\n".join(p.read_text() for p in sorted(EXAMPLES.glob("*.tc")))
    assert len(parse(text)) == len(EXPECTED)
