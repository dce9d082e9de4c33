"""Where the project's folders are, and how a path is shown. Imports nothing, so the command line can start fast."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
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
