"""Filter expressions over a kernels table: `time > 5us and bound == dram`, `prec ~ tc`, `not (flop
> 1T)`.

The app's live filter and the CLI's `--where` share this one engine. The grammar is Python's own
(`ast`, never `eval`): the text is first cut into tokens here (column names, which may hold spaces
and `%`: `%Roof`, `DRAM B/s`; numbers with units, `5us`, `1GB`; text values; operators), each token
written as a placeholder name (`c0 > v1`), and the placeholder source parsed by `ast.parse`, which
brings `and`/`or`/`not`, parentheses and their precedence. Only comparisons of a column with a
value, joined by those, are accepted; every error names its position in the text as typed.

Comparisons: `==` (also `=`), `!=`, `<`, `<=`, `>`, `>=` on numbers (a unit must be the column's:
`time > 1GB` is refused), `==`/`!=` (any case) and `~`/`!~` (a regular expression, any case) on
text. A row whose value is unknown matches no comparison (`!=` included): unknown is never 0."""

from __future__ import annotations

import ast
import difflib
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .columns import UNITS
from .roofline import MEMORY_LEVELS

# (code per row, distinct values as text): how a caller that keeps them (the app's table) lends
# them.
Factors = Callable[[str], tuple[np.ndarray, list[str]]]


class WhereError(ValueError):
    """An expression that cannot filter: `problem` at `position` (0-based) of the text as typed."""

    def __init__(self, problem: str, position: int, hint: str = "") -> None:
        self.problem, self.position, self.hint = problem, position, hint
        super().__init__(f"{problem} at character {position + 1}")


# --- units
# --------------------------------------------------------------------------------------------------
# The table is in SI base units (columns.py): `5us` is 5e-6 against seconds. Each unit the dimension
# it measures, which must be the column's.
_PREFIXES = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_SMALL = {"m": 1e-3, "u": 1e-6, "µ": 1e-6, "n": 1e-9}  # for seconds only: `ms` is milli, `MB` mega
_BASES = ("FLOP/s", "FLOP", "B/s", "B", "Hz", "s")


def quantity(unit: str) -> tuple[float, str] | None:
    """`GB` -> (1e9, "B"), `us` -> (1e-6, "s"), `%` -> (1, "%"), `k` -> (1e3, ""): the factor to the
    table's SI unit and that unit ("" a plain number); None for no unit this knows. Case is forgiven
    where it cannot mislead (`gb`, `Gb/s`, `ghz`), but `m` is milli only before seconds (`ms`) and
    never mega."""
    if unit == "%":
        return 1.0, "%"
    if unit in _PREFIXES:
        return _PREFIXES[unit], ""
    base = next((b for b in _BASES if unit.lower().endswith(b.lower())), None)
    if base is None:
        return None
    prefix = unit[: len(unit) - len(base)]
    if base == "s" and prefix in _SMALL:
        return _SMALL[prefix], base
    scale = _PREFIXES.get(prefix, _PREFIXES.get(prefix.upper()) if prefix != "m" else None)
    return None if scale is None else (scale, base)


# --- tokens
# --------------------------------------------------------------------------------------------------
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_UNIT = re.compile(r"[A-Za-zµ%]+(?:/s)?")
_OP = re.compile(r"==|!=|<=|>=|!~|=~|[<>=~]")
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")
_KEYWORD = re.compile(r"(and|or|not)(?![\w%])", re.IGNORECASE)
_WORD = re.compile(r"[^\s()<>=!~'\"]+")
_REGEX = re.compile(r"[^\s()]+")  # after `~`: a regex unquoted runs to a space or a parenthesis
_ENDS = set(" \t()<>=!~")  # what may follow a column name
_PYTHON_OP = {"=": "==", "~": "in", "=~": "in", "!~": "not in"}


@dataclass(frozen=True)
class Token:
    kind: str  # column, word (a name that is no column), value, op, open, close, and, or, not
    text: str  # a column: its key; a quoted value: inside the quotes; else as typed
    start: int
    end: int
    number: float | None = None  # a value typed as a number, in SI units
    unit: str = ""  # that number's dimension ("" plain)
    typed: str = ""  # as typed (a column's name, a keyword)


def tokens(text: str, names: Mapping[str, str]) -> list[Token]:
    """The expression cut into tokens. `names`: every name a column is known by (lower case) -> its
    key."""
    by_length = sorted(names, key=len, reverse=True)
    out: list[Token] = []
    at = 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        after = out[-1].text if out and out[-1].kind == "op" else None
        token = _token(text, at, names, by_length) if after is None else _value(text, at, after)
        out.append(token)
        at = token.end
    return out


def _token(text: str, at: int, names: Mapping[str, str], by_length: list[str]) -> Token:
    char = text[at]
    if char in "()":
        return Token("open" if char == "(" else "close", char, at, at + 1)
    if op := _OP.match(text, at):
        return Token("op", op.group(), at, op.end())
    if keyword := _KEYWORD.match(text, at):
        return Token(
            keyword.group(1).lower(),
            keyword.group(1).lower(),
            at,
            keyword.end(),
            typed=keyword.group(1),
        )
    lowered = text[at:].lower()
    for name in by_length:  # the longest name first: `DRAM B/s` before `DRAM B`
        end = at + len(name)
        if lowered.startswith(name) and (end == len(text) or text[end] in _ENDS):
            return Token("column", names[name], at, end, typed=text[at:end])
    if _NUMBER.match(text, at) or _QUOTED.match(text, at):
        return _value(text, at, "")
    word = _WORD.match(text, at)
    if word is None:  # a lone `!`, `'` or `"`
        raise _stray(text, at)
    return Token("word", word.group(), at, word.end(), typed=word.group())


def _stray(text: str, at: int) -> WhereError:
    if text[at] in "'\"":
        return WhereError(f"{text[at]} is never closed", at, f"end the text with {text[at]}")
    return WhereError(f"unexpected {text[at]!r}", at, "operators: == != < <= > >= ~ !~")


def _value(text: str, at: int, after: str) -> Token:
    """The value at `at` (`after`: the operator before it): quoted text, a number with its unit,
    else a word (after `~`, a regular expression up to a space or a parenthesis)."""
    if quoted := _QUOTED.match(text, at):
        inside = quoted.group(1) if quoted.group(1) is not None else quoted.group(2)
        return Token("value", inside, at, quoted.end(), typed=quoted.group())
    regex = after in ("~", "=~", "!~")
    if text[at] in "()" or (not regex and _OP.match(text, at)):
        raise WhereError(f"expected a value after {after!r}", at, "e.g. time > 5us, bound == dram")
    number = _NUMBER.match(text, at)
    if number and not regex:
        unit = _UNIT.match(text, number.end())
        end = unit.end() if unit else number.end()
        if end == len(text) or text[end] in _ENDS:
            found = quantity(unit.group()) if unit else (1.0, "")
            if found is None:
                raise WhereError(
                    f"unknown unit {text[number.end() : end]!r}", number.end(), _UNITS_HINT
                )
            typed = text[at:end]
            return Token("value", typed, at, end, float(number.group()) * found[0], found[1], typed)
    word = (_REGEX if regex else _WORD).match(text, at)
    if word is None:  # a lone `!`, `'` or `"`
        raise _stray(text, at)
    return Token("value", word.group(), at, word.end(), typed=word.group())


_UNITS_HINT = (
    "units: s ms us ns, B kB MB GB TB, FLOP GFLOP TFLOP, FLOP/s TFLOP/s, B/s GB/s, Hz GHz, %, k"
    " M G T"
)


# --- the tree
# --------------------------------------------------------------------------------------------------
class Predicate:
    """One node of a parsed expression: a boolean mask over the rows of a frame."""

    def mask(self, rows: _Rows) -> np.ndarray:  # pragma: no cover - every node overrides it
        raise NotImplementedError


@dataclass(frozen=True)
class _Rows:
    frame: pd.DataFrame
    shown: Mapping[str, Callable[[object], str]]
    factors: Factors


@dataclass(frozen=True)
class _Join(Predicate):
    every: bool  # and: every part; or: any part
    parts: tuple[Predicate, ...]

    def mask(self, rows: _Rows) -> np.ndarray:
        masks = [part.mask(rows) for part in self.parts]
        joined: np.ndarray = (
            np.logical_and.reduce(masks) if self.every else np.logical_or.reduce(masks)
        )
        return joined


@dataclass(frozen=True)
class _Not(Predicate):
    part: Predicate

    def mask(self, rows: _Rows) -> np.ndarray:
        return ~self.part.mask(rows)


_NUMERIC_OPS: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class _Compare(Predicate):
    column: Token
    op: str  # ==, !=, <, <=, >, >=, in (regex), not in
    value: Token

    def mask(self, rows: _Rows) -> np.ndarray:
        key = self.column.text
        values = rows.frame[key]
        numeric = pd.api.types.is_numeric_dtype(values) and not isinstance(
            values.dtype, pd.CategoricalDtype
        )
        if numeric:
            return self._numbers(values.to_numpy(dtype=float, na_value=np.nan))
        return self._texts(*rows.factors(key), rows.shown.get(key))

    def _numbers(self, values: np.ndarray) -> np.ndarray:
        if self.op in ("in", "not in"):
            raise WhereError(
                f"{self.column.typed} is a number: ~ matches text", self.value.start, "use < > =="
            )
        if self.value.number is None:
            raise WhereError(
                f"{self.column.typed} is a number, not {self.value.text!r}",
                self.value.start,
                "e.g. time > 5us",
            )
        with np.errstate(invalid="ignore"):
            hits: np.ndarray = _NUMERIC_OPS[self.op](values, self.value.number)
        known: np.ndarray = hits & ~np.isnan(values)  # unknown matches nothing, `!=` included
        return known

    def _texts(
        self, codes: np.ndarray, uniques: list[str], shown: Callable[[object], str] | None
    ) -> np.ndarray:
        # Each distinct text once (a kernel launched 10k times is one name), as stored and as the
        # table shows it (`tensor_bf16` is `TC bf16` on screen: `prec ~ tc` finds it).
        texts = [(u, shown(u)) if shown else (u,) for u in uniques]
        if self.op in ("in", "not in"):
            try:
                regex = re.compile(self.value.text, re.IGNORECASE)
            except re.error as err:
                raise WhereError(f"not a regular expression ({err})", self.value.start) from None
            hits = [any(regex.search(t) for t in both) for both in texts]
        elif self.op in ("==", "!="):
            wanted = _SYNONYMS.get(
                (self.column.text, self.value.text.lower()), {self.value.text.lower()}
            )
            hits = [any(t.lower() in wanted for t in both) for both in texts]
        else:
            raise WhereError(
                f"{self.column.typed} is text: {self.op} compares numbers",
                self.value.start,
                "use == != or ~",
            )
        found = np.fromiter(hits, dtype=bool, count=len(hits))
        if self.op in ("!=", "not in"):
            found = ~found
        per_row: np.ndarray = np.append(found, False)[codes]  # code -1 (unknown) matches nothing
        return per_row


# `bound == memory` where the Bound column holds the memory level that bounds the row: any of them.
_SYNONYMS = {("roof", "memory"): set(MEMORY_LEVELS)}


@dataclass(frozen=True)
class Where:
    """A parsed expression: `mask(frame)` is the rows it keeps."""

    text: str
    tree: Predicate
    columns: frozenset[str] = field(default_factory=frozenset)  # the keys it reads

    def mask(
        self,
        frame: pd.DataFrame,
        shown: Mapping[str, Callable[[object], str]] | None = None,
        factors: Factors | None = None,
    ) -> np.ndarray:
        """A boolean per row of `frame`. `shown`: a text column's values as the table shows them
        (also matched); `factors`: the caller's (codes, distinct texts) per column, where it keeps
        them. Raises WhereError where a value does not suit its column (text against numbers, a bad
        regex)."""
        missing = sorted(self.columns - set(frame.columns))
        if missing:
            raise WhereError(f"these rows have no {missing[0]} column", 0)
        return self.tree.mask(_Rows(frame, shown or {}, factors or _factorize(frame)))


def _factorize(frame: pd.DataFrame) -> Factors:
    def factors(key: str) -> tuple[np.ndarray, list[str]]:
        column = frame[key]
        try:
            codes, uniques = pd.factorize(column, use_na_sentinel=True)
        except TypeError:  # lists (a group's `nvtx_ranges`): matched as their text
            codes, uniques = pd.factorize(column.map(_cell_text), use_na_sentinel=True)
        return codes, [str(u) for u in uniques]

    return factors


def _cell_text(value: object) -> str | None:
    return None if value is None else str(value)


def names_of(keys: Iterable[str]) -> dict[str, str]:
    """Columns by key alone, any case: what `parse` knows without a view's titles."""
    return {key.lower(): key for key in keys}


def parse(text: str, names: Mapping[str, str], units: Mapping[str, str] = UNITS) -> Where:
    """`text` as an expression over the columns `names` gives (lower-case name -> key). `units`: a
    column's SI unit, which a number's unit must match. Raises WhereError naming the problem and its
    position."""
    cut = tokens(text, names)
    if not cut:
        raise WhereError("an empty expression", 0, "e.g. time > 5us")
    source, starts = _placeholders(cut)
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError as err:
        raise _syntax_error(err, cut, starts, len(text)) from None
    predicate = _Build(cut, starts, names, units).node(tree)
    return Where(text, predicate, frozenset(t.text for t in cut if t.kind == "column"))


def _placeholders(cut: list[Token]) -> tuple[str, dict[int, int]]:
    """`time > 5us` -> `c0 > v2`, and the index of the token at each offset of that source."""
    parts, starts, at = [], {}, 0
    for i, token in enumerate(cut):
        word = {
            "column": f"c{i}",
            "word": f"w{i}",
            "value": f"v{i}",
            "open": "(",
            "close": ")",
        }.get(token.kind)
        word = word or (
            _PYTHON_OP.get(token.text, token.text) if token.kind == "op" else token.kind
        )
        starts[at] = i
        parts.append(word)
        at += len(word) + 1
    return " ".join(parts), starts


def _syntax_error(
    err: SyntaxError, cut: list[Token], starts: dict[int, int], end: int
) -> WhereError:
    """Python's complaint about the placeholder source, said of the token it points at."""
    last = cut[-1]
    if last.kind in ("op", "and", "or", "not", "open"):
        return WhereError(
            f"the expression ends too soon after {last.typed or last.text!r}", end, "finish it"
        )
    opened: list[Token] = []
    for token in cut:
        if token.kind == "open":
            opened.append(token)
        elif token.kind == "close" and not opened:
            return WhereError("')' closes no '('", token.start)
        elif token.kind == "close":
            opened.pop()
    if opened:
        return WhereError("'(' is never closed", opened[0].start, "add ')'")
    at = [i for start, i in starts.items() if start <= (err.offset or 1) - 1]
    i = at[-1] if at else 0
    token = cut[i]
    if token.kind == "word" and i and cut[i - 1].number is not None and quantity(token.text):
        return WhereError(
            f"a space before the unit {token.text!r}",
            token.start,
            f"write {cut[i - 1].typed}{token.text}",
        )
    return WhereError(
        f"unexpected {token.typed or token.text!r}",
        token.start,
        "e.g. time > 5us and bound == dram",
    )


class _Build:
    """The ast of the placeholder source -> Predicates, refusing everything but comparisons and
    and/or/not."""

    def __init__(
        self,
        cut: list[Token],
        starts: dict[int, int],
        names: Mapping[str, str],
        units: Mapping[str, str],
    ):
        self.cut, self.starts, self.names, self.units = cut, starts, names, units

    def at(self, node: ast.expr) -> Token:
        return self.cut[self.starts.get(node.col_offset, 0)]

    def node(self, node: ast.expr) -> Predicate:
        if isinstance(node, ast.BoolOp):
            return _Join(isinstance(node.op, ast.And), tuple(self.node(v) for v in node.values))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return _Not(self.node(node.operand))
        if isinstance(node, ast.Compare):
            return self.compare(node)
        token = self.at(node)
        if token.kind == "word":
            raise self.no_column(token)
        raise WhereError(
            f"expected a comparison at {token.typed or token.text!r}",
            token.start,
            "e.g. time > 5us",
        )

    def compare(self, node: ast.Compare) -> Predicate:
        right_at = self.starts[node.comparators[0].col_offset]
        op = self.cut[right_at - 1]
        if len(node.ops) != 1:
            raise WhereError(
                "one comparison at a time",
                self.cut[self.starts[node.comparators[1].col_offset] - 1].start,
                "write 1us < time and time < 5us",
            )
        left, right = self.at(node.left), self.cut[right_at]
        name = {"=": "==", "~": "in", "=~": "in", "!~": "not in"}.get(op.text, op.text)
        if left.kind == "word":
            raise self.no_column(left)
        if left.kind != "column" or not isinstance(node.left, ast.Name):
            raise WhereError(
                f"expected a column at {left.typed or left.text!r}", left.start, "e.g. time > 5us"
            )
        if right.kind != "value" or not isinstance(node.comparators[0], ast.Name):
            raise WhereError(
                f"compare {left.typed} with a value", right.start, "e.g. time > 5us, bound == dram"
            )
        unit = self.units.get(left.text, "")
        if right.unit and unit and right.unit != unit:
            raise WhereError(
                f"{right.typed} is in {right.unit}, {left.typed} in {unit}", right.start
            )
        return _Compare(left, name, right)

    def no_column(self, word: Token) -> WhereError:
        close = difflib.get_close_matches(word.text.lower(), list(self.names), n=1)
        hint = (
            f"did you mean {close[0]}?" if close else "name a column by its title or its --json key"
        )
        return WhereError(f"no column {word.text!r}", word.start, hint)


def looks_like_where(text: str, names: Mapping[str, str]) -> bool:
    """Whether a filter typed is an expression rather than a name pattern (`gemm`, `(gemm|conv)`,
    `batch_size=1`, which keep their meaning): past any `(` and `not`, it starts with a column's
    name and an operator, or it holds an operator between spaces (` > `: no kernel-name regex does;
    `tme > 5us` is then told "no column 'tme'")."""
    if re.search(r"\s(==|!=|<=|>=|!~|=~|<|>|~|=)\s", f" {text} "):
        return True
    start = re.sub(r"^(\s*(\(|not(?![\w%])))*\s*", "", text, flags=re.IGNORECASE).lower()
    for name in sorted(names, key=len, reverse=True):
        if start.startswith(name):
            op = _OP.match(start[len(name) :].lstrip())
            return op is not None and op.group() != "="  # `batch_size=1`: a name's value, as before
    return False
