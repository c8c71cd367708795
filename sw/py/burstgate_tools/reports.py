"""Reading burstgate-sim's output with errors that name the file, for every `burstgate` command
(kept apart from plot.py so the commands that draw nothing do not import matplotlib)."""

import json
import pathlib


class InputError(Exception):
    """A report or series file that cannot be read; the message names the file."""


def load_report(path):
    try:
        report = json.loads(pathlib.Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: {exc}") from exc
    for key in ("scenario", "scheduler", "tenants"):
        if key not in report:
            raise InputError(f"{path}: not a burstgate-sim report (no '{key}')")
    for t in report["tenants"]:
        if "hist_us" not in t:
            raise InputError(f"{path}: tenant {t.get('name')!r} has no hist_us (report from an older burstgate-sim?)")
    return report
