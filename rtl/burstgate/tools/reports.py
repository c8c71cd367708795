"""Reading burstgate-sim's output with errors that name the file, for every `burstgate` command
(kept apart from plot.py so the commands that draw nothing do not import matplotlib)."""

import argparse
import csv
import io
import json
import math
import os
import pathlib


class InputError(Exception):
    """Input that cannot be used (a file, a field, an option); the message names where."""


def read_text(path):
    """A file's text as UTF-8; an unreadable or non-UTF-8 file raises InputError naming it."""
    try:
        return pathlib.Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from exc
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from exc


def csv_rows(path, need, what):
    """(line, row) of a CSV file whose header has every column of ``need``; a missing column, a
    malformed line or a non-UTF-8 file raises InputError naming the file and line. ``what`` names
    what the file should be, for the missing-column message."""
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    try:
        missing = [c for c in need if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"{path}:1: not {what} (missing column(s) {', '.join(missing)})")
        for line, row in enumerate(reader, start=2):
            yield line, row
    except csv.Error as exc:
        raise InputError(f"{path}:{reader.line_num}: {exc}") from exc


def load_report(path):
    try:
        report = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from exc
    if not isinstance(report, dict):
        raise InputError(f"{path}: not a burstgate-sim report (a JSON object is expected)")
    for key in ("scenario", "scheduler", "tenants"):
        if key not in report:
            raise InputError(f"{path}: not a burstgate-sim report (no '{key}')")
    for t in report["tenants"]:
        if not isinstance(t, dict) or "hist_us" not in t:
            name = t.get("name") if isinstance(t, dict) else t
            raise InputError(f"{path}: tenant {name!r} has no hist_us (report from an older burstgate-sim?)")
    return report


def output_folder(path):
    """``path`` as a folder to write into, made now (before any work), or InputError."""
    out = pathlib.Path(path)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {out}: {exc.strerror or exc}") from exc
    return out


def output_file(path, option="--out"):
    """``path`` as a file to write later, checked now (before any work): not a folder, in a
    folder that exists and is writable; otherwise InputError naming ``option``."""
    out = pathlib.Path(path)
    if out.is_dir():
        raise InputError(f"{option} {out}: is a folder")
    folder = out.parent
    if not folder.is_dir():
        raise InputError(f"{option} {out}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise InputError(f"{option} {out}: not writable")
    return out


def _finite(text, above_zero):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value < 0 or (above_zero and value == 0):
        bound = "above 0" if above_zero else "at or above 0"
        raise argparse.ArgumentTypeError(f"expected a finite number {bound}, got {text!r}")
    return value


def positive_number(text):
    """argparse type: a finite number above zero."""
    return _finite(text, above_zero=True)


def non_negative_number(text):
    """argparse type: a finite number at or above zero."""
    return _finite(text, above_zero=False)
