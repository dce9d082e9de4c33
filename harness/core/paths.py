"""Where the project's folders are, and how a path is shown. Imports nothing heavy, so the command line can start
fast."""

import re
import tempfile
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
HARNESS = PROJECT_ROOT / "harness"
#: The adapters' launcher, relative to the package: run as a script, so no import names it.
LAUNCHER = "authors/adapters/_launch.py"
CLAIMS_DIR = PROJECT_ROOT / "claims"
REPORTS_DIR = PROJECT_ROOT / "reports"
DEFAULT_LOCK = PROJECT_ROOT / "data" / "lock.yaml"
PINS_FILE = PROJECT_ROOT / "data" / "upstream.yaml"
RUN_LOG_DIR = PROJECT_ROOT / ".cache" / "runs"
VENDOR_DIR = PROJECT_ROOT / "vendor"


def shown(path) -> str:
    """``path`` relative to the project when it is inside it (reports carry no local absolute paths)."""
    try:
        return str(Path(path).resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def scrub_paths(obj, *, scratch: Path | None = None, data_root: Path | None = None, any_temp: bool = True):
    """``obj`` (a string, or a dict or list of them, at any depth) without absolute local paths: the data root
    becomes ``<data root>``, ``scratch`` ``<scratch>``, the project's paths relative and, with ``any_temp``, any
    other temporary path ``<scratch>``. The one scrubber of what reaches a record or a report."""
    if isinstance(obj, dict):
        return {k: scrub_paths(v, scratch=scratch, data_root=data_root, any_temp=any_temp) for k, v in obj.items()}
    if isinstance(obj, list):
        return [scrub_paths(v, scratch=scratch, data_root=data_root, any_temp=any_temp) for v in obj]
    if not isinstance(obj, str):
        return obj
    pairs = ((data_root, "<data root>"), (scratch, "<scratch>"), (f"{PROJECT_ROOT}/", ""), (PROJECT_ROOT, "."))
    for path, repl in pairs:
        if path is not None:
            obj = obj.replace(str(path), repl)
    return re.sub(re.escape(tempfile.gettempdir().rstrip("/")) + r"/[^\s'\"]*", "<scratch>", obj) if any_temp else obj


def paper_file(claim_path: Path, name: str) -> Path:
    """The file of paper ``name`` for a claim: in ``papers/`` beside it when its folder has one, else the
    project's (a claim copied to a scratch folder is still of its paper)."""
    beside = Path(claim_path).parent / "papers"
    return (beside if beside.is_dir() else CLAIMS_DIR / "papers") / f"{name}.yaml"
