"""Re-execute notebooks in place, in the environment the tests use.

    .venv/bin/python scripts/regenerate_notebooks.py            # every notebook
    .venv/bin/python scripts/regenerate_notebooks.py notebooks/03_*.ipynb

Outputs are written without timing metadata, so two regenerations are
byte-identical (tests/test_notebooks.py checks the stored outputs against a fresh
run through nbval). The cells' slide metadata is written again from the new outputs
(scripts/slides.py), so the slides stay in step.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
sys.path.insert(0, str(ROOT))

from lesson_lib.testing import apply_notebook_env  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))
from slides import with_slides  # noqa: E402


def stable_widget_ids(path: Path, cell) -> None:
    """A widget view's model id is a random comm id, and the widget state is not saved (the
    view cannot be redrawn from the file either way): give each a stable id instead."""
    for n, output in enumerate(cell.outputs):
        view = output.get("data", {}).get(WIDGET_VIEW)
        if view:
            view["model_id"] = uuid.uuid5(uuid.NAMESPACE_URL, f"{path.name}#{cell.id}/{n}").hex


def regenerate(path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient
    from nbval.plugin import coalesce_streams

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=False,
                            record_timing=False, resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # stops on an error, except in cells tagged raises-exception
    for cell in nb.cells:  # one stream output per name: how output is split is timing, not content
        if cell.cell_type == "code":
            cell.outputs = coalesce_streams(cell.outputs)
            stable_widget_ids(path, cell)
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python",
                                 "name": "python3"}
    with_slides(nb)  # long outputs may move where a subslide starts
    nbformat.write(nb, path)
    print(f"regenerated {path.relative_to(ROOT)}")


def main(argv: list[str]) -> int:
    apply_notebook_env()
    paths = [Path(a).resolve() for a in argv] or sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    for path in paths:
        regenerate(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
