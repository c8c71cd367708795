"""Shared pytest set-up: where the C++ build is, and the reference model's binding."""

import importlib
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(os.environ.get("BG_BUILD_DIR", ROOT / "build" / "cmake"))


def import_model():
    """The ``burstgate_model`` extension; a missing build is an error, never a skip."""
    try:
        return importlib.import_module("burstgate_model")
    except ImportError as exc:
        raise RuntimeError(
            f"cannot import burstgate_model ({exc}); build it with `make cpp` and put "
            f"{BUILD / 'python'} on PYTHONPATH (the Makefile does both)") from exc


@pytest.fixture(scope="session")
def bg_model():
    return import_model()
