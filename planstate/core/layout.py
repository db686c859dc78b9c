"""The names of the `.planning/` layout: the folder, its machine-local part, STATE.md, history and initiatives."""

from __future__ import annotations

PLANNING = ".planning"  # the workspace folder, in the project folder
LOCAL = ".local"  # machine-local and gitignored, inside PLANNING: the lock, caches, heartbeats
STATE_FILE = "STATE.md"  # an initiative's state: YAML front matter and a markdown body
HISTORY_FILE = "history.jsonl"  # an initiative's lifecycle history, one JSON object per line
INITIATIVES = "initiatives"  # the folder of the further initiatives, one sub-folder per slug
ARCHIVE = "archive"  # inside each record folder: the records `planstate records archive` moved out of the regions
