"""Keep the Chinese edition (notebooks/zh/) in step with the English notebooks.

Each Chinese notebook maps cell for cell onto its English twin of the same name:

- the same number of cells, the same types and the same cell ids, in the same order;
- every cell's metadata records `zh.en_hash`: the hash of the English cell it translates.
  When the English cell changes and the translation does not follow, the hashes differ
  and tests/test_zh_edition.py fails, naming the cell;
- a code cell is the English code with the replacements listed in its `zh.strings`
  ([[english, chinese], ...], applied in order to every occurrence), each English
  fragment inside a string literal or a comment of the English code: what a cell says
  may be Chinese, what it does is the same code;
- a markdown cell is written in Chinese (`zh.same: true` marks one kept as it is, such as
  a formula or a table of code names).

    .venv/bin/python scripts/zh_sync.py status               # what is out of step
    .venv/bin/python scripts/zh_sync.py init 03              # a new twin: cells copied, hashed
    .venv/bin/python scripts/zh_sync.py apply 03             # code cells from English + strings
    .venv/bin/python scripts/zh_sync.py accept 03 CELL_ID    # this cell's translation follows
                                                             # the English again: rehash it

After `apply`, regenerate the outputs like any notebook's:
`.venv/bin/python scripts/regenerate_notebooks.py notebooks/zh/03_*.ipynb`.
"""

from __future__ import annotations

import hashlib
import io
import re
import sys
import tokenize
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
EN_DIR = ROOT / "notebooks"
ZH_DIR = EN_DIR / "zh"
_MAGIC = re.compile(r"^\s*[%!].*$", re.MULTILINE)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


_TIMES = re.compile(r"<!-- times -->.*?<!-- /times -->", re.S)
_TIME_LINE = re.compile(r"^\*\*Time\*\*:.*$", re.M)


def cell_hash(source: str) -> str:
    """The hash a translation records of the English cell it translates. The reading times
    (the **Time** line, the table of times) are left out: scripts/reading_times.py --write
    puts the same numbers in both editions, so a new estimate is no change to translate."""
    masked = _TIME_LINE.sub("**Time**:", _TIMES.sub("<!-- times -->", source))
    return hashlib.sha256(masked.encode("utf-8")).hexdigest()[:16]


def english_of(zh_path: Path) -> Path:
    return EN_DIR / zh_path.name


def chinese_of(en_path: Path) -> Path:
    return ZH_DIR / en_path.name


def number(path: Path) -> str:
    """A notebook's number as `find` takes it: "03", or "03b" for the second part of 03."""
    return path.name.split("_", 1)[0]


def find(pattern: str) -> Path:
    """The English notebook whose name starts with `pattern` ("03" → 03_the_tool_…, not
    03b_…: a whole number is matched first)."""
    found = sorted(EN_DIR.glob(f"{pattern}_*.ipynb")) or sorted(EN_DIR.glob(f"{pattern}*.ipynb"))
    if len(found) != 1:
        raise SystemExit(f"{pattern!r} names {len(found)} English notebooks, not one")
    return found[0]


def text_spans(source: str) -> list[tuple[int, int]]:
    """Where the string literals and comments of `source` are, as (start, end) offsets.
    Lines of IPython magics (%xmode …) are blanked first: they are not Python."""
    code = _MAGIC.sub(lambda m: " " * len(m.group(0)), source)
    starts = [0]
    for line in code.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    kinds = {tokenize.STRING, tokenize.COMMENT}
    for name in ("FSTRING_MIDDLE", "FSTRING_START", "FSTRING_END"):  # Python 3.12+
        if hasattr(tokenize, name):
            kinds.add(getattr(tokenize, name))
    spans = []
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type in kinds:
            (srow, scol), (erow, ecol) = token.start, token.end
            spans.append((starts[srow - 1] + scol, starts[erow - 1] + ecol))
    return spans


def replaced(english: str, strings: list) -> tuple[str, list[str]]:
    """The English code with the replacements applied, and what is wrong with them. Every
    replacement is found in the English code itself, all at once: what one replacement
    wrote is never matched by another; where two overlap, the longer one is made."""
    problems, spans, found = [], text_spans(english), []
    for pair in strings:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
            problems.append(f"a replacement is not [english, chinese]: {pair!r}")
            continue
        before, after = pair
        at = english.find(before) if before else -1
        if at < 0:
            problems.append(f"{before!r} is not in the English code")
            continue
        while at >= 0:
            if not any(s <= at and at + len(before) <= e for s, e in spans):
                problems.append(f"{before!r} is code, not inside a string or a comment: "
                                "only what the code says may be translated")
                break
            found.append((at, at + len(before), after, before))
            at = english.find(before, at + len(before))
    kept: list[tuple[int, int, str, str]] = []  # where two overlap, the longer one wins
    for start, end, after, before in sorted(found, key=lambda f: (f[0] - f[1], f[0])):
        if all(end <= s or start >= e for s, e, _, _ in kept):
            kept.append((start, end, after, before))
    out, last = [], 0
    for start, end, after, _ in sorted(kept):
        out += [english[last:start], after]
        last = end
    return "".join(out) + english[last:], problems


def problems(zh_path: Path) -> list[str]:
    """Everything that keeps `zh_path` from being a faithful twin of its English notebook."""
    en_path = english_of(zh_path)
    if not en_path.exists():
        return [f"{zh_path.name}: no English notebook of that name"]
    en, zh = nbformat.read(en_path, as_version=4), nbformat.read(zh_path, as_version=4)
    found = []
    if [c.cell_type for c in en.cells] != [c.cell_type for c in zh.cells] or \
            [c.id for c in en.cells] != [c.id for c in zh.cells]:
        found.append(f"{zh_path.name}: its cells ({len(zh.cells)}) do not map one to one "
                     f"onto the English ({len(en.cells)}): same ids, types and order")
        return found
    for n, (e, z) in enumerate(zip(en.cells, zh.cells, strict=True)):
        where = f"{zh_path.name}, cell {n} (id {z.id}, {z.cell_type})"
        meta = z.metadata.get("zh") or {}
        if meta.get("en_hash") != cell_hash(e.source):
            found.append(f"{where}: the English cell changed since it was translated; "
                         f"translate the change, then `scripts/zh_sync.py accept "
                         f"{number(zh_path)} {z.id}`")
        if z.cell_type == "code":
            code, wrong = replaced(e.source, meta.get("strings") or [])
            found += [f"{where}: {w}" for w in wrong]
            if code != z.source:
                found.append(f"{where}: the code is not the English code with its listed "
                             "replacements (`scripts/zh_sync.py apply` rebuilds it)")
        elif z.cell_type == "markdown" and not meta.get("same") and not _CJK.search(z.source):
            found.append(f"{where}: not translated (no Chinese in it; mark `zh.same` if it "
                         "is meant to stay as it is)")
    return found


def init(en_path: Path) -> Path:
    """A new Chinese twin: every cell copied, hashed; markdown still to translate."""
    zh_path = chinese_of(en_path)
    if zh_path.exists():
        raise SystemExit(f"{zh_path.relative_to(ROOT)} exists already")
    nb = nbformat.read(en_path, as_version=4)
    for cell in nb.cells:
        cell.metadata["zh"] = {"en_hash": cell_hash(cell.source)}
        if cell.cell_type == "code":
            cell.metadata["zh"]["strings"] = []
    ZH_DIR.mkdir(exist_ok=True)
    nbformat.write(nb, zh_path)
    return zh_path


def apply(zh_path: Path) -> list[str]:
    """Rebuild every code cell from the English code and its replacements."""
    en = nbformat.read(english_of(zh_path), as_version=4)
    zh = nbformat.read(zh_path, as_version=4)
    wrong = []
    for e, z in zip(en.cells, zh.cells, strict=True):
        if z.cell_type == "code":
            z.source, found = replaced(e.source, (z.metadata.get("zh") or {}).get("strings") or [])
            wrong += found
    nbformat.write(zh, zh_path)
    return wrong


def accept(zh_path: Path, cell_id: str) -> None:
    en = {c.id: c for c in nbformat.read(english_of(zh_path), as_version=4).cells}
    zh = nbformat.read(zh_path, as_version=4)
    for cell in zh.cells:
        if cell.id == cell_id:
            cell.metadata.setdefault("zh", {})["en_hash"] = cell_hash(en[cell_id].source)
            nbformat.write(zh, zh_path)
            return
    raise SystemExit(f"no cell {cell_id} in {zh_path.name}")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("status", "init", "apply", "accept"):
        print(__doc__)
        return 2
    if argv[0] == "status":
        found = [p for z in sorted(ZH_DIR.glob("[0-9][0-9]*_*.ipynb")) for p in problems(z)]
        missing = [e.name for e in sorted(EN_DIR.glob("[0-9][0-9]*_*.ipynb"))
                   if not chinese_of(e).exists()]
        print("\n".join(found + [f"{m}: no Chinese twin yet" for m in missing]) or "in step")
        return 1 if found or missing else 0
    en_path = find(argv[1])
    if argv[0] == "init":
        print(f"created {init(en_path).relative_to(ROOT)}")
    elif argv[0] == "apply":
        wrong = apply(chinese_of(en_path))
        print("\n".join(wrong) or f"rebuilt the code cells of {chinese_of(en_path).name}")
        return 1 if wrong else 0
    else:
        accept(chinese_of(en_path), argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
