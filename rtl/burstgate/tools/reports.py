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
        text = pathlib.Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from exc
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from exc
    nul = text.find("\0")
    if nul >= 0:
        raise InputError(f"{path}:{text.count(chr(10), 0, nul) + 1}: a NUL character (a binary file?)")
    return text


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


LAT_FIELDS = ("avg", "p50", "p90", "p99", "p999", "p9999", "p99999", "max", "count")


def _no_constant(name):
    raise ValueError(f"{name} is not a number")


def _is_number(v, integer=False):
    ok = isinstance(v, int) if integer else isinstance(v, (int, float))
    return ok and not isinstance(v, bool) and math.isfinite(v) and v >= 0


def _check_report(path, report):
    """The fields the commands read, with their types: InputError naming the field otherwise."""
    if not isinstance(report, dict):
        raise InputError(f"{path}: not a burstgate-sim report (a JSON object is expected)")
    for key in ("scenario", "scheduler", "tenants"):
        if key not in report:
            raise InputError(f"{path}: not a burstgate-sim report (no '{key}')")
    for key in ("scenario", "scheduler", "engine"):
        if key in report and not (isinstance(report[key], str) and report[key]):
            raise InputError(f"{path}: {key}: expected a name, got {report[key]!r}")
    if not isinstance(report["tenants"], list) or not report["tenants"]:
        raise InputError(f"{path}: tenants: expected a non-empty list, got {report['tenants']!r:.60}")
    for i, t in enumerate(report["tenants"]):
        where = f"{path}: tenants[{i}]"
        if not isinstance(t, dict):
            raise InputError(f"{where}: expected an object, got {t!r:.60}")
        if not isinstance(t.get("name"), str) or not t["name"]:
            raise InputError(f"{where}.name: expected a name, got {t.get('name')!r:.60}")
        if "hist_us" not in t:
            raise InputError(f"{path}: tenant {t['name']!r} has no hist_us (report from an older burstgate-sim?)")
        for key, integer in (("iops", False), ("mbps", False), ("throttled", True)):
            if not _is_number(t.get(key), integer):
                raise InputError(f"{where}.{key}: expected a {'count' if integer else 'number'} >= 0, got {t.get(key)!r:.60}")
        lat = t.get("lat_us")
        if not isinstance(lat, dict):
            raise InputError(f"{where}.lat_us: expected an object, got {lat!r:.60}")
        for key in LAT_FIELDS:
            if not _is_number(lat.get(key), key == "count"):
                raise InputError(f"{where}.lat_us.{key}: expected a number >= 0, got {lat.get(key)!r:.60}")
        hist = t["hist_us"]
        if not isinstance(hist, list) or not all(
                isinstance(b, list) and len(b) == 2 and _is_number(b[0]) and _is_number(b[1], True) for b in hist):
            raise InputError(f"{where}.hist_us: expected [[upper edge us, count], ...], got {hist!r:.60}")
    return report


def load_report(path):
    """A burstgate-sim report (JSON) with every field the commands read checked; InputError naming
    the file and the field otherwise."""
    try:
        report = json.loads(read_text(path), parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from exc
    except ValueError as exc:  # NaN, Infinity
        raise InputError(f"{path}: not a burstgate-sim report ({exc})") from exc
    except RecursionError:
        raise InputError(f"{path}: not a burstgate-sim report (nested too deeply)") from None
    return _check_report(path, report)


def number(path, line, column, cell, blank=math.nan):
    """A CSV cell as a finite number >= 0 (``blank`` for an empty cell); InputError naming the file,
    line and column otherwise."""
    if cell in ("", None):
        if blank is None:
            raise InputError(f"{path}:{line}: {column}: missing")
        return blank
    try:
        value = float(cell)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or value < 0:
        raise InputError(f"{path}:{line}: {column}: expected a number >= 0, got {cell!r:.40}")
    return value


def output_folder(path, option="--out"):
    """``path`` as a folder to write into, made now (before any work), or InputError."""
    out = pathlib.Path(path)
    if out.exists() and not out.is_dir():
        raise InputError(f"{option} {out}: exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{option} {out}: {exc.strerror or exc}") from exc
    return out


def output_file(path, option="--out"):
    """``path`` as a file to write later, checked now (before any work): not a folder, its folder
    made and writable; otherwise InputError naming ``option``."""
    out = pathlib.Path(path)
    if out.is_dir():
        raise InputError(f"{option} {out}: is a folder")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{option} {out}: {exc.strerror or exc}") from None
    if not os.access(out.parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
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
