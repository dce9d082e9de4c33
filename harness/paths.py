"""Where the project's folders are. Imports nothing, so the command line can start fast."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CLAIMS_DIR = PROJECT_ROOT / "claims"
REPORTS_DIR = PROJECT_ROOT / "reports"
DEFAULT_LOCK = PROJECT_ROOT / "data" / "lock.yaml"
PINS_FILE = PROJECT_ROOT / "data" / "upstream.yaml"
RUN_LOG_DIR = PROJECT_ROOT / ".cache" / "runs"
VENDOR_DIR = PROJECT_ROOT / "vendor"
