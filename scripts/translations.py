"""The library's Chinese catalogue: what a learner reads from lesson_lib, in Chinese.

Text a learner reads is marked in the code with `_()` (and `ngettext()`; `N_()` for text
defined at import and translated where it is shown) of lesson_lib.i18n,
with named placeholders filled after translation: `_("{n} messages kept").format(n=n)`, never
an f-string (a translator must see the whole sentence). The Chinese lives in one .po file
per module, lesson_lib/locale/zh_CN/<module>.po (lesson_lib/exercises/nb05.py →
exercises.nb05.po), so translators of different modules never edit the same file; gettext
reads their merge, compiled into lesson_lib/locale/zh_CN/LC_MESSAGES/lesson_lib.mo.

    .venv/bin/python scripts/translations.py update    # new marked strings → their .po file
    .venv/bin/python scripts/translations.py compile   # every .po → the .mo gettext reads
    .venv/bin/python scripts/translations.py check     # what is missing or stale (exit 1)

tests/test_translations.py runs `problems()`: every marked string has a Chinese translation,
no .po keeps a string the code no longer has, the placeholders of each translation are the
English one's, and the .mo says what the .po files say.
"""

from __future__ import annotations

import io
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "lesson_lib"
LOCALE = PACKAGE / "locale" / "zh_CN"
MO = LOCALE / "LC_MESSAGES" / "lesson_lib.mo"
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
_PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)?(?:[!:][^{}]*)?\}(?!\})")


def module_of(path: Path) -> str:
    """lesson_lib/exercises/nb05.py → "exercises.nb05"."""
    return ".".join(path.relative_to(PACKAGE).with_suffix("").parts)


def marked() -> dict[str, list[tuple[object, int]]]:
    """{module: [(msgid, line), ...]} of every marked string, in the order written."""
    found: dict[str, list[tuple[object, int]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "i18n.py":
            continue
        for line, message, _comments, _context in extract_from_file(
                "python", str(path), keywords=KEYWORDS):
            found.setdefault(module_of(path), []).append((message, line))
    return found


def new_catalog() -> Catalog:
    """An empty catalogue with a fixed header (no dates that change with each update)."""
    fixed = datetime(2026, 12, 1, tzinfo=timezone.utc)
    return Catalog(locale="zh_CN", project="lesson_lib", version="1", domain="lesson_lib",
                   copyright_holder="the lesson_lib authors", msgid_bugs_address="",
                   creation_date=fixed, revision_date=fixed, fuzzy=False,
                   last_translator="the lesson_lib authors", language_team="zh_CN")


def _read(path: Path) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, locale="zh_CN")


def catalogues() -> dict[str, Catalog]:
    """{module: its .po catalogue}, for every .po file there is."""
    return {p.stem: _read(p) for p in sorted(LOCALE.glob("*.po"))}


def update() -> list[str]:
    """Add the marked strings each module's .po lacks; drop what the code no longer has."""
    said = []
    have = catalogues()
    for module, messages in marked().items():
        catalog = have.get(module) or new_catalog()
        wanted = {m if isinstance(m, str) else m[0]: m for m, _ in messages}
        for key in [m.id if isinstance(m.id, str) else m.id[0] for m in catalog if m.id]:
            if key not in wanted:
                del catalog[key]
                said.append(f"{module}: dropped {key[:60]!r}")
        for message, line in messages:
            key = message if isinstance(message, str) else message[0]
            if key not in catalog:
                catalog.add(message, string="" if isinstance(message, str) else ("", ""),
                            locations=[(f"lesson_lib/{module.replace('.', '/')}.py", line)])
                said.append(f"{module}: new {key[:60]!r}")
        LOCALE.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        write_po(buffer, catalog, width=100, omit_header=False, sort_output=False,
                 include_lineno=False)
        (LOCALE / f"{module}.po").write_bytes(buffer.getvalue())
    return said


def merged() -> Catalog:
    """All the .po files as one catalogue (the same string twice must say the same)."""
    out = new_catalog()
    for module, catalog in catalogues().items():
        for message in catalog:
            if not message.id:
                continue
            kept = out.get(message.id)
            if kept is not None and kept.string != message.string:
                raise SystemExit(f"{message.id!r} is translated two ways ({module}.po and "
                                 "another): say it the same way in both")
            out.add(message.id, message.string, locations=message.locations)
    return out


def compile_mo() -> None:
    MO.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    write_mo(buffer, merged())
    MO.write_bytes(buffer.getvalue())


def _key(value: object) -> object:
    return tuple(value) if isinstance(value, (list, tuple)) else value


def placeholders(text: str) -> list[str]:
    return sorted(m.group(0) for m in _PLACEHOLDER.finditer(text or ""))


def problems() -> list[str]:
    """Everything that keeps the catalogue from being complete and in step with the code."""
    found = []
    have = catalogues()
    for module, messages in marked().items():
        catalog = have.get(module)
        for message, line in messages:
            key = message if isinstance(message, str) else message[0]
            entry = catalog.get(key) if catalog is not None else None
            where = f"lesson_lib/{module.replace('.', '/')}.py:{line}"
            if entry is None:
                found.append(f"{where}: {key[:70]!r} is not in {module}.po "
                             "(scripts/translations.py update)")
                continue
            strings = entry.string if isinstance(entry.string, tuple) else (entry.string,)
            ids = message if isinstance(message, tuple) else (message,)
            if not all(strings):
                found.append(f"{where}: {key[:70]!r} has no Chinese yet ({module}.po)")
                continue
            for english, chinese in zip(ids * len(strings), strings, strict=False):
                if placeholders(english) != placeholders(chinese):
                    found.append(f"{where}: the Chinese of {key[:50]!r} has the placeholders "
                                 f"{placeholders(chinese)}, the English {placeholders(english)}")
    code = {module: {m if isinstance(m, str) else m[0] for m, _ in messages}
            for module, messages in marked().items()}
    for module, catalog in have.items():
        for entry in catalog:
            key = entry.id if isinstance(entry.id, str) else entry.id[0] if entry.id else ""
            if key and key not in code.get(module, set()):
                found.append(f"{module}.po: {key[:70]!r} is no longer in the code "
                             "(scripts/translations.py update drops it)")
    if have:
        if not MO.exists():
            found.append(f"{MO.relative_to(ROOT)} is missing (scripts/translations.py compile)")
        else:
            with MO.open("rb") as f:
                compiled = {_key(m.id): _key(m.string) for m in read_mo(f) if m.id}
            wanted = {_key(m.id): _key(m.string) for m in merged() if m.id}
            if compiled != wanted:
                found.append(f"{MO.relative_to(ROOT)} is older than the .po files "
                             "(scripts/translations.py compile)")
    return found


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if command == "update":
        print("\n".join(update()) or "nothing new")
        return 0
    if command == "compile":
        compile_mo()
        print(f"wrote {MO.relative_to(ROOT)}")
        return 0
    if command == "check":
        found = problems()
        print("\n".join(found) or "the catalogue is complete and in step")
        return 1 if found else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
