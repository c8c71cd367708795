"""burstgate-gateway's command line: bad input gets exit code 2 and a message naming what is
wrong (the option, or FILE:LINE: field path for the scenario), before anything is served."""

import subprocess

from .gateway import GATEWAY, SCENARIO


def run(*args):
    return subprocess.run([str(GATEWAY), *args], capture_output=True, text=True, timeout=30)


def test_non_loopback_tcp_refused(tmp_path):
    p = run("--config", str(SCENARIO), "--tcp", "10.0.0.1:10809")
    assert p.returncode == 2
    assert "not a loopback address" in p.stderr and "--allow-remote" in p.stderr


def test_bad_options(tmp_path):
    sock = str(tmp_path / "s")
    for args, msg in [(["--unix", sock], "--config"),
                      (["--config", str(SCENARIO)], "exactly one of"),
                      (["--config", str(SCENARIO), "--unix", sock, "--engine", "foo"], "unknown engine 'foo'"),
                      (["--config", str(SCENARIO), "--unix", sock, "--export-size", "1000"], "--export-size"),
                      (["--config", str(SCENARIO), "--tcp", "127.0.0.1:99999"], "bad port"),
                      (["--config", str(SCENARIO), "--unix", sock, "--tenant-buffer", "64k"], "--tenant-buffer"),
                      (["--config", str(SCENARIO), "--unix", sock, "--handshake-slots", "0"], "--handshake-slots")]:
        p = run(*args)
        assert p.returncode == 2, (args, p.stderr)
        assert msg in p.stderr, (args, p.stderr)


def test_scenario_errors_are_located(tmp_path):
    bad = tmp_path / "bad.yaml"
    text = SCENARIO.read_text().replace("burst: {iops: 4000, mbps: 40}", "burst: {iops: 4000, mbps: 2}")
    text = text.replace("base:  {iops: 4000, mbps: 40}", "base:  {iops: 4000, mbps: 2}")
    bad.write_text(text)
    p = run("--config", str(bad), "--unix", str(tmp_path / "s"))
    # 2 MB/s is 2000 bytes per 1 ms window: no 4 KiB I/O of the victim could ever be admitted.
    assert p.returncode == 2
    assert f"{bad}:" in p.stderr and "tenants[0]" in p.stderr
    missing = run("--config", str(tmp_path / "nope.yaml"), "--unix", str(tmp_path / "s"))
    assert missing.returncode == 2 and "nope.yaml" in missing.stderr
