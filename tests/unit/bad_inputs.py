"""Malformed inputs for every `burstgate` subcommand, and how each must end (test_bad_input.py).

A ``Case`` is the files to write into a fresh folder, the command line (``{d}`` stands for that
folder) and the expectation: ``bad`` cases must exit 2 with a first stderr line that matches
``where`` (the file and line, or the option, and the field where there is one); ``ok`` cases are
valid edge inputs that must succeed (and ``check`` what they were asked to write).

The scenario cases come from one small valid scenario, written by ``Yaml`` so that the line of
every key is known: each key of docs/simulator.md is set to values of the wrong type, out of its
range, NaN, infinite and empty, then removed, doubled and joined by an unknown key. Trace cases
start from one valid record per format and break one field at a time.
"""

import dataclasses
import gzip
import random
import re

# The C++ programs under the build tree, and the Python subcommands (run as `python -m burstgate`).
SIM, HOST, GATEWAY, COST, LSM = "sim", "host", "gateway", "cost", "lsm"


@dataclasses.dataclass
class Case:
    id: str
    sub: str                 # the burstgate subcommand it exercises
    argv: list               # after the program (C++) or `burstgate` (Python); "{d}" = the case's folder
    files: dict = dataclasses.field(default_factory=dict)   # name -> bytes or str
    expect: str = "bad"      # "bad": exit 2, located message; "ok": exit 0
    where: str = ""          # regex the first stderr line must match (bad cases)
    check: object = None     # ok cases: function(folder) -> None, asserting what was written
    timeout: float = 60       # a passing case takes well under a second; the margin is for a loaded machine
    dirs: tuple = ()         # folders to create


# ---- the scenario ----------------------------------------------------------------------------

class Yaml:
    """Block-style YAML of nested dicts / lists whose scalars are YAML text, with the line of
    every path (``tenants[0].workload.iodepth``) recorded."""

    def __init__(self, doc):
        self.lines, self.at = [], {}
        self._emit(doc, "", 0)

    def _emit(self, node, path, indent):
        pad = " " * indent
        if isinstance(node, dict):
            for k, v in node.items():
                p = f"{path}.{k}" if path else str(k)
                self.at[p] = len(self.lines) + 1
                if isinstance(v, (dict, list)) and v:
                    self.lines.append(f"{pad}{k}:")
                    self._emit(v, p, indent + 2)
                else:
                    self.lines.append(f"{pad}{k}: {v if not isinstance(v, (dict, list)) else ('{}' if isinstance(v, dict) else '[]')}")
        else:
            for i, v in enumerate(node):
                p = f"{path}[{i}]"
                self.at[p] = len(self.lines) + 1
                if isinstance(v, dict):
                    first = len(self.lines)
                    self._emit(v, p, indent + 2)
                    self.lines[first] = pad + "- " + self.lines[first][indent + 2:]
                else:
                    self.lines.append(f"{pad}- {v}")

    def text(self):
        return "\n".join(self.lines) + "\n"


def base_scenario():
    """A small valid scenario with every section: a closed and an open tenant."""
    return {
        "name": "sweep", "seed": "3", "duration_ms": "5", "warmup_ms": "1", "scheduler": "bios",
        "window_us": "1000",
        "dpu": {
            "threads": "2", "lb_policy": "jsq",
            "cpu_ns": {"A": {"read": {"base": "2200", "per_kib": "40"}, "write": {"base": "1800", "per_kib": "35"}},
                       "B": {"read": {"base": "3000", "per_kib": "55"}, "write": {"base": "2500", "per_kib": "45"}}},
            "ingress_gbps": "100", "egress_gbps": "100", "swlimit_mbps": "3000",
            "backend_us": {"dist": "lognormal", "median": "150", "p99": "600"},
            "reserved_share": "0.05", "target_delay_us": "200", "adjust_max": "8", "estimate_error": "1.0", "cost_adjust": "false",
            "sa_discipline": "rr", "queue_depth": "4095", "header_bytes": "128", "bios_alpha": "0.5",
            "bios_weight_throttle": "2.0", "provision": "envelope", "grant_carry": "true", "iops_cap": "true",
            "buffers": {"dedicated": "64", "shared": "256", "borrow_cap": "128", "quiet_windows": "1"},
        },
        "bios": {"floor_share": "0", "usage_clamp": "false", "spill_base": "false", "reserve": "two_tenants"},
        "libra": {"floor_share": "0.48", "ewma_weight": "0.5", "policy_ms": "1000", "admission": "envelope",
                  "unit": "vop"},
        "dualbucket": {"hot_threshold_iops": "2000", "steady_intervals": "5", "cheque_share": "0.2", "alpha": "8000",
                       "percentile": "0.95", "headroom_mbps": "330", "mu_mbps": "24000", "main_share": "1.0",
                       "main_slices": "1", "tenant_contracts": "true", "reoffer": "fifo", "monitor_unit": "bytes",
                       "hot_threshold_bps": "8192000"},
        "tenants": [
            {"name": "victim", "product": "B", "base": {"iops": "20000", "mbps": "200"},
             "burst": {"iops": "60000", "mbps": "600"}, "burst_mode": "paid", "burst_credits": "0", "queues": "1",
             "max_conns": "4",
             "workload": {"mode": "closed", "iodepth": "2", "sizes": {"4k": "0.5", "16k": "0.5"}, "read_share": "0.5",
                          "segments": "8", "hot_segments": "2", "hot_share": "0.5", "start_ms": "0", "stop_ms": "5"}},
            {"name": "steady", "product": "A", "base": {"iops": "10000", "mbps": "100"},
             "burst": {"iops": "10000", "mbps": "100"},
             "workload": {"mode": "open", "rate_iops": "5000", "sizes": {"4k": "1.0"}}},
        ],
    }


def _copy(doc):
    if isinstance(doc, dict):
        return {k: _copy(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_copy(v) for v in doc]
    return doc


def _walk(doc, path):
    """(container, key) of a dotted path with [i] list steps."""
    parts = re.findall(r"[^.\[\]]+|\[\d+\]", path)
    cur = doc
    for p in parts[:-1]:
        cur = cur[int(p[1:-1])] if p.startswith("[") else cur[p]
    last = parts[-1]
    return cur, (int(last[1:-1]) if last.startswith("[") else last)


def with_value(path, value, doc=None):
    doc = _copy(doc or base_scenario())
    c, k = _walk(doc, path)
    c[k] = value
    return doc


def without(path, doc=None):
    doc = _copy(doc or base_scenario())
    c, k = _walk(doc, path)
    del c[k]
    return doc


# Every scalar key: (path, kind, low, high). kind: num, int, bool, enum (low = the values), str.
T0, T1 = "tenants[0]", "tenants[1]"
KEYS = [
    ("seed", "int", 0, 2**32 - 1), ("duration_ms", "num", 1e-6, 1e9), ("warmup_ms", "num", 0, 4),
    ("scheduler", "enum", ("bios", "wild", "base", "dualbucket", "ddrr"), None), ("window_us", "num", 1, 100000),
    ("dpu.threads", "int", 1, 16), ("dpu.lb_policy", "enum", ("static", "rr", "jsq", "p2c", "least_ios"), None),
    ("dpu.cpu_ns.A.read.base", "int", 0, 2**24 - 1), ("dpu.cpu_ns.B.write.per_kib", "int", 0, 2**24 - 1),
    ("dpu.ingress_gbps", "num", 0.001, 1e4), ("dpu.egress_gbps", "num", 0.001, 1e4),
    ("dpu.swlimit_mbps", "num", 0.001, 1e6), ("dpu.backend_us.dist", "enum", ("lognormal",), None),
    ("dpu.backend_us.median", "num", 0, 1e7), ("dpu.backend_us.p99", "num", 0, 1e7),
    ("dpu.reserved_share", "num", 0, 1), ("dpu.target_delay_us", "num", 0.001, 4e6), ("dpu.adjust_max", "num", 1, 15.99),
    ("dpu.estimate_error", "num", 0.01, 100), ("dpu.cost_adjust", "enum", ("cost", "burst", "true", "false"), None),
    ("dpu.sa_discipline", "enum", ("rr", "fifo"), None), ("dpu.queue_depth", "int", 1, 4095),
    ("dpu.header_bytes", "int", 0, 65536), ("dpu.bios_alpha", "num", 0, 1),
    ("dpu.bios_weight_throttle", "num", 0, 1000), ("dpu.provision", "enum", ("envelope", "io4k"), None),
    ("dpu.grant_carry", "bool", None, None), ("dpu.buffers.dedicated", "int", 1, 65535),
    ("dpu.buffers.shared", "int", 0, 65535), ("dpu.buffers.borrow_cap", "int", 0, 65535),
    ("dpu.buffers.quiet_windows", "int", 0, 15),
    ("bios.floor_share", "num", 0, 1), ("bios.usage_clamp", "bool", None, None), ("bios.spill_base", "bool", None, None),
    ("bios.reserve", "enum", ("two_tenants", "share"), None),
    ("libra.floor_share", "num", 1e-6, 1), ("libra.ewma_weight", "num", 1e-4, 1), ("libra.policy_ms", "num", 0, 1e6),
    ("libra.admission", "enum", ("envelope", "floor"), None), ("libra.unit", "enum", ("vop", "vector"), None),
    ("dualbucket.hot_threshold_iops", "num", 0, 1e9), ("dualbucket.steady_intervals", "int", 0, 254),
    ("dualbucket.cheque_share", "num", 0, 1), ("dualbucket.alpha", "int", 1, 2**32 - 1),
    ("dualbucket.headroom_mbps", "int", 0, 2**30), ("dualbucket.mu_mbps", "int", 1, 2**30),
    ("dualbucket.main_share", "num", 1e-9, 1), ("dualbucket.main_slices", "int", 1, 1024),
    ("dualbucket.tenant_contracts", "bool", None, None),
    ("dualbucket.reoffer", "enum", ("fifo", "steady_first"), None),
    ("dualbucket.monitor_unit", "enum", ("requests", "bytes"), None),
    ("dualbucket.hot_threshold_bps", "num", 0, 1e13),
    (f"{T0}.product", "enum", ("A", "B"), None), (f"{T0}.base.iops", "num", 0, 1e9),
    (f"{T0}.base.mbps", "num", 0, 1e7), (f"{T0}.burst.iops", "num", 0, 1e9), (f"{T0}.burst.mbps", "num", 0, 1e7),
    (f"{T0}.burst_mode", "enum", ("paid", "credit"), None), (f"{T0}.burst_credits", "int", 0, 2**32 - 1),
    (f"{T0}.queues", "int", 1, 16), (f"{T0}.max_conns", "int", 1, 4096),
    (f"{T0}.workload.mode", "enum", ("closed", "open", "trace"), None), (f"{T0}.workload.iodepth", "int", 1, 65536),
    (f"{T0}.workload.read_share", "num", 0, 1), (f"{T0}.workload.segments", "int", 1, 65536),
    (f"{T0}.workload.hot_segments", "int", 0, 65536), (f"{T0}.workload.hot_share", "num", 1e-9, 1),
    (f"{T0}.workload.start_ms", "num", 0, 1e9), (f"{T0}.workload.stop_ms", "num", 0, 1e9),
    (f"{T0}.workload.sizes.4k", "num", 0, 1), (f"{T1}.workload.rate_iops", "num", 0, 1e9),
]


def loop_scenario():
    """base_scenario() with dpu.sa_loop, which only the simulator takes (the gateway refuses it)."""
    doc = base_scenario()
    doc["dpu"]["sa_loop"] = {"policy": "priority", "offload": "true", "lt_us": "10", "alpha": "1.2", "per_io_us": "1",
                             "gate": "first_then_fit", "tasks": [{"period_us": "100", "us": "5", "offload": "false"}]}
    return doc


LOOP_KEYS = [
    ("dpu.sa_loop.policy", "enum", ("fifo", "priority"), None), ("dpu.sa_loop.offload", "bool", None, None),
    ("dpu.sa_loop.lt_us", "num", 0, 1e6), ("dpu.sa_loop.alpha", "num", 0, 1000), ("dpu.sa_loop.per_io_us", "num", 0, 1e6),
    ("dpu.sa_loop.tasks[0].period_us", "num", 1, 1e7), ("dpu.sa_loop.tasks[0].us", "num", 0, 1e6),
    ("dpu.sa_loop.tasks[0].offload", "bool", None, None),
    ("dpu.sa_loop.gate", "enum", ("first_then_fit", "start_before_deadline"), None),
]

WRONG_TYPE = ["abc", "[1, 2]", "{a: 1}", "''", "~"]
NOT_FINITE = [".nan", ".inf", "-.inf", "1e400"]


def bad_values(kind, lo, hi):
    """(label, YAML text) of values that must be refused for a key of this kind and range."""
    out = []
    if kind in ("num", "int"):
        out += [(f"type-{i}", v) for i, v in enumerate(WRONG_TYPE)] + [(f"nonfinite-{i}", v) for i, v in enumerate(NOT_FINITE)]
        out.append(("below", repr(-1 if lo >= 0 and lo < 1e-3 else lo - 1) if lo > 0 or lo == 0 else "-1"))
        if lo > 0:
            out.append(("below-0", "0" if lo >= 1e-6 else "-1e-12"))
        out.append(("above", repr(hi * 10 + 1) if hi < 1e8 else "1e300"))
        out.append(("negative", "-5"))
        if kind == "int":
            out += [("fraction", "1.5"), ("hex-text", "0x1G")]
    elif kind == "bool":
        out += [("word", "maybe"), ("number", "2"), ("list", "[true]"), ("null", "~")]
    elif kind == "enum":
        out += [("unknown", "nope"), ("case", lo[0].upper() if lo[0].upper() != lo[0] else lo[0].lower() + "x"),
                ("number", "5"), ("list", f"[{lo[0]}]"), ("null", "~")]
    # dedupe by text
    seen, uniq = set(), []
    for label, v in out:
        if v not in seen:
            seen.add(v)
            uniq.append((label, v))
    return uniq


def scen_case(cid, doc_or_text, where, expect="bad", extra_files=None, argv_extra=(), check=None, sub=SIM,
              name="scenario.yaml", timeout=30):
    text = doc_or_text if isinstance(doc_or_text, (str, bytes)) else Yaml(doc_or_text).text()
    files = {name: text, **(extra_files or {})}
    return Case(cid, sub, [f"{{d}}/{name}", "--quiet", "--out", "{d}/report.json", *argv_extra], files, expect,
                where, check, timeout)


def _line_of(doc, path):
    return Yaml(doc).at[path]


def scenario_cases():
    cases = []
    F = r"\{d\}/scenario\.yaml|.*/scenario\.yaml"
    loc = lambda doc, path: rf"({F}):{_line_of(doc, path)}: {re.escape(path)}: "
    for path, kind, lo, hi in KEYS:
        for label, v in bad_values(kind, lo, hi):
            doc = with_value(path, v)
            cases.append(scen_case(f"sim-{path}-{label}", doc, loc(doc, path)))
    for path, kind, lo, hi in LOOP_KEYS:
        for label, v in bad_values(kind, lo, hi):
            doc = with_value(path, v, loop_scenario())
            cases.append(scen_case(f"sim-{path}-{label}", doc, loc(doc, path)))
    loops = [
        ("sa-loop-no-policy", without("dpu.sa_loop.policy", loop_scenario()), "dpu.sa_loop.policy"),
        ("sa-loop-unknown", with_value("dpu.sa_loop.bogus_key", "1", loop_scenario()), "dpu.sa_loop.bogus_key"),
        ("sa-loop-tasks-map", with_value("dpu.sa_loop.tasks", {"a": "1"}, loop_scenario()), "dpu.sa_loop.tasks"),
        ("sa-loop-task-scalar", with_value("dpu.sa_loop.tasks[0]", "5", loop_scenario()), "dpu.sa_loop.tasks[0]"),
        ("sa-loop-task-no-us", without("dpu.sa_loop.tasks[0].us", loop_scenario()), "dpu.sa_loop.tasks[0]"),
        ("sa-loop-scalar", with_value("dpu.sa_loop", "priority"), "dpu.sa_loop"),
    ]
    for label, doc, path in loops:
        cases.append(scen_case(f"sim-{label}", doc, rf"({F}):\d+: {re.escape(path)}"))
    cases.append(scen_case("sim-sa-loop-ok", loop_scenario(), None, expect="ok", check=_report_ok))
    # Unknown and doubled keys in every mapping, missing required keys.
    for parent in ["", "dpu", "dpu.cpu_ns.A.read", "dpu.backend_us", "dpu.buffers", "bios", "libra", "dualbucket", T0,
                   f"{T0}.base", f"{T0}.burst", f"{T0}.workload", f"{T1}.workload"]:
        doc = base_scenario()
        c = _walk(doc, parent)[0][_walk(doc, parent)[1]] if parent else doc
        c["bogus_key"] = "1"
        p = f"{parent}.bogus_key" if parent else "bogus_key"
        cases.append(scen_case(f"sim-unknown-{parent or 'top'}", doc, loc(doc, p)))
        y = Yaml(base_scenario())
        first_key = next(k for k in y.at if (k.rsplit(".", 1)[0] if "." in k else "") == parent
                         and not k.endswith("]")) if parent else "name"
        line = y.at[first_key]
        if y.lines[line - 1].lstrip().startswith("- "):   # a list item's first key: double the second
            first_key = next(k for k in y.at if k.startswith(parent + ".") and y.at[k] == line + 1)
            line += 1
        lines = y.lines[:]
        lines.insert(line, lines[line - 1])   # the key again, right below
        cases.append(scen_case(f"sim-duplicate-{parent or 'top'}", "\n".join(lines) + "\n",
                               rf"({F}):{line + 1}: {re.escape(first_key)}: key given twice"))
    for path in ["duration_ms", "dpu", "dpu.cpu_ns", "tenants", f"{T0}.name", f"{T0}.base", f"{T0}.base.iops",
                 f"{T0}.base.mbps", f"{T0}.workload.mode", f"{T0}.workload.iodepth", f"{T0}.workload.sizes",
                 f"{T1}.workload.rate_iops", "dpu.cpu_ns.A.read", "dpu.cpu_ns.A.read.base", "dpu.buffers.dedicated",
                 f"{T0}.workload"]:
        where = re.escape(path.rsplit(".", 1)[0]) if path.endswith(("read.base", "iops", "mbps")) else re.escape(path)
        cases.append(scen_case(f"sim-missing-{path}", without(path), rf"({F}):\d+: {where}"))
    # Cross-field rules.
    cross = [
        ("warmup-ge-duration", with_value("warmup_ms", "5"), "warmup_ms"),
        # R in bytes while the monitor counts requests: refused, not silently ignored.
        ("bps-without-bytes", with_value("dualbucket.monitor_unit", "requests"), "dualbucket.hot_threshold_bps"),
        ("stop-before-start", with_value(f"{T0}.workload.start_ms", "4", with_value(f"{T0}.workload.stop_ms", "2")), f"{T0}.workload.stop_ms"),
        ("burst-below-base", with_value(f"{T0}.burst.iops", "10"), f"{T0}.burst"),
        ("hot-gt-segments", with_value(f"{T0}.workload.hot_segments", "9"), f"{T0}.workload.hot_segments"),
        ("hot-share-no-hot", with_value(f"{T0}.workload.hot_segments", "0"), f"{T0}.workload.hot_share"),
        ("all-hot-share", with_value(f"{T0}.workload.hot_segments", "8"), f"{T0}.workload.hot_share"),
        ("sizes-sum", with_value(f"{T0}.workload.sizes", {"4k": "0.5", "8k": "0.4"}), f"{T0}.workload.sizes"),
        ("sizes-empty", with_value(f"{T0}.workload.sizes", {}), f"{T0}.workload.sizes"),
        ("sizes-twice", with_value(f"{T0}.workload.sizes", {"4k": "0.5", "4096": "0.5"}), f"{T0}.workload.sizes.4096"),
        ("size-bad", with_value(f"{T0}.workload.sizes", {"4x": "1"}), f"{T0}.workload.sizes.4x"),
        ("size-zero", with_value(f"{T0}.workload.sizes", {"0": "1"}), f"{T0}.workload.sizes.0"),
        ("size-huge", with_value(f"{T0}.workload.sizes", {"16m": "1"}), f"{T0}.workload.sizes.16m"),
        ("size-negative", with_value(f"{T0}.workload.sizes", {"-4k": "1"}), f"{T0}.workload.sizes.-4k"),
        ("sizes-list", with_value(f"{T0}.workload.sizes", "[4k]"), f"{T0}.workload.sizes"),
        ("dup-tenant", with_value(f"{T1}.name", "victim"), f"{T1}.name"),
        ("tenant-name-comma", with_value(f"{T1}.name", "a,b"), f"{T1}.name"),
        ("tenant-name-empty", with_value(f"{T1}.name", "''"), f"{T1}.name"),
        ("tenant-name-list", with_value(f"{T1}.name", "[a]"), f"{T1}.name"),
        ("name-quote", with_value("name", "'a\"b'"), "name"),
        ("name-list", with_value("name", "[a]"), "name"),
        ("product-unprofiled", with_value(f"{T0}.product", "C"), f"{T0}.product"),
        ("product-E", with_value(f"{T0}.product", "E"), f"{T0}.product"),
        ("p99-below-median", with_value("dpu.backend_us.p99", "100"), "dpu.backend_us.p99"),
        ("median0-p99", with_value("dpu.backend_us.median", "0"), "dpu.backend_us.median"),
        ("percentile-odd", with_value("dualbucket.percentile", "0.96"), "dualbucket.percentile"),
        ("percentile-nan", with_value("dualbucket.percentile", ".nan"), "dualbucket.percentile"),
        ("main-share-0", with_value("dualbucket.main_share", "0"), "dualbucket.main_share"),
        ("closed-rate", with_value(f"{T0}.workload.rate_iops", "5"), f"{T0}.workload.rate_iops"),
        ("open-iodepth", with_value(f"{T1}.workload.iodepth", "5"), f"{T1}.workload.iodepth"),
        ("closed-trace", with_value(f"{T0}.workload.trace", {"file": "t.csv", "format": "alibaba"}), f"{T0}.workload.trace"),
        ("tenants-empty", with_value("tenants", "[]"), "tenants"),
        ("tenants-map", with_value("tenants", {"a": "1"}), "tenants"),
        ("tenants-scalar", with_value("tenants", "5"), "tenants"),
        ("tenant-scalar", with_value(T1, "5"), T1),
        ("dpu-list", with_value("dpu", "[1]"), "dpu"),
        ("cpu-unknown-product", with_value("dpu.cpu_ns.Z", {"read": {"base": "1", "per_kib": "1"}}), "dpu.cpu_ns.Z"),
        ("cpu-list", with_value("dpu.cpu_ns", "[1]"), "dpu.cpu_ns"),
        ("workload-scalar", with_value(f"{T0}.workload", "closed"), f"{T0}.workload"),
    ]
    for label, doc, path in cross:
        cases.append(scen_case(f"sim-{label}", doc, rf"({F}):\d+: {re.escape(path)}"))
    many = base_scenario()
    many["tenants"] = [_copy(base_scenario()["tenants"][1]) for _ in range(1025)]
    for i, t in enumerate(many["tenants"]):
        t["name"] = f"t{i}"
    cases.append(scen_case("sim-1025-tenants", many, rf"({F}):\d+: tenants: more than 1024"))
    # Whole files.
    good = Yaml(base_scenario()).text()
    cases += [
        scen_case("sim-empty-file", "", rf"({F}):1: "),
        scen_case("sim-comment-only", "# nothing\n", rf"({F}):1: "),
        scen_case("sim-list-top", "- 1\n- 2\n", rf"({F}):1: "),
        scen_case("sim-scalar-top", "hello\n", rf"({F}):1: "),
        scen_case("sim-truncated", good[: len(good) // 2] + "  - {name: [\n", rf"({F}):\d+: "),
        scen_case("sim-tabs", good.replace("  threads", "\tthreads"), rf"({F}):\d+: "),
        scen_case("sim-non-utf8", good.replace("name: sweep", "name: sw\xe9ep").encode("latin-1"), rf"({F}):1: \(text\): not UTF-8"),
        scen_case("sim-binary", bytes(random.Random(5).randrange(256) for _ in range(4000)), rf"({F}):\d+: "),
        scen_case("sim-nul", good.encode().replace(b"sweep", b"sw\0eep"), rf"({F}):1: \(text\): control character"),
        scen_case("sim-deep-list", "a: " + "[" * 100000 + "]" * 100000 + "\n", rf"({F}):\d+: "),
        scen_case("sim-deep-map", "".join(" " * i + f"k{i}:\n" for i in range(3000)) + " " * 3000 + "v: 1\n", rf"({F}):\d+: "),
        scen_case("sim-deep-flow-map", "a: " + "{b: " * 20000 + "1" + "}" * 20000 + "\n", rf"({F}):\d+: "),
        scen_case("sim-complex-key", good + "? [a, b]\n: 1\n", rf"({F}):\d+: "),
        scen_case("sim-complex-key-dpu", good.replace("dpu:\n", "dpu:\n  ? {x: 1}\n  : 2\n"), rf"({F}):\d+: dpu"),
        scen_case("sim-two-documents", good + "---\n" + good, rf"({F}):\d+: "),
        scen_case("sim-alias-bomb", "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{c}: &{c} [{', '.join('*' + p for _ in range(10))}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
            + good, rf"({F}):\d+: ", timeout=20),
        scen_case("sim-tag", good.replace("seed: 3", "seed: !!binary aGVsbG8="), rf"({F}):\d+: seed: "),
        scen_case("sim-huge-line", "name: " + "x" * (8 << 20) + "\n" + good.split("\n", 1)[1], rf"({F}):\d+: "),
    ]
    cases.append(Case("sim-folder", SIM, ["{d}/scen", "--quiet"], {}, "bad", r"\{d\}/scen|.*/scen: is a folder", dirs=("scen",)))
    cases.append(Case("sim-missing-file", SIM, ["{d}/nope.yaml", "--quiet"], {}, "bad", r".*/nope\.yaml: cannot open"))
    cases.append(Case("sim-dev-zero", SIM, ["/dev/zero", "--quiet"], {}, "bad", r"/dev/zero", timeout=20))
    return cases


def trace_scenario_cases():
    """Scenarios with a trace workload: the trace's file, its format and its bytes."""
    cases = []
    F = r"(\{d\}|/\S*)/scenario\.yaml"

    def doc(file="t.csv", fmt="alibaba", **extra):
        d = base_scenario()
        d["tenants"][1]["workload"] = {"mode": "trace", "trace": {"file": file, "format": fmt, **extra}}
        return d

    good = "0,R,0,4096,1000\n0,W,4096,4096,2000\n"
    p = f"{T1}.workload.trace"
    cases += [
        scen_case("trace-relative-missing", doc("sub/t.csv"), rf"{F}:\d+: {re.escape(p)}.file: cannot open '.*/sub/t\.csv' \(a relative"),
        scen_case("trace-absolute-missing", doc("/nonexistent/t.csv"), rf"{F}:\d+: {re.escape(p)}.file: cannot open"),
        scen_case("trace-folder", doc("tdir"), rf"{F}:\d+: {re.escape(p)}.file", extra_files={"tdir/x": ""}),
        scen_case("trace-bad-format", doc(fmt="csv"), rf"{F}:\d+: {re.escape(p)}.format: unknown trace format"),
        scen_case("trace-format-list", doc(fmt="[alibaba]"), rf"{F}:\d+: {re.escape(p)}.format"),
        scen_case("trace-no-format", without(f"{p}.format", doc()), rf"{F}:\d+: {re.escape(p)}.format: missing",
                  extra_files={"t.csv": good}),
        scen_case("trace-no-file", without(f"{p}.file", doc()), rf"{F}:\d+: {re.escape(p)}.file: missing"),
        scen_case("trace-time-scale-0", doc(time_scale="0"), rf"{F}:\d+: {re.escape(p)}.time_scale", extra_files={"t.csv": good}),
        scen_case("trace-time-scale-nan", doc(time_scale=".nan"), rf"{F}:\d+: {re.escape(p)}.time_scale", extra_files={"t.csv": good}),
        scen_case("trace-skip-neg", doc(skip_s="-1"), rf"{F}:\d+: {re.escape(p)}.skip_s", extra_files={"t.csv": good}),
        scen_case("trace-segment-size", doc(segment_size="1q"), rf"{F}:\d+: {re.escape(p)}.segment_size", extra_files={"t.csv": good}),
        scen_case("trace-loop-word", doc(loop="maybe"), rf"{F}:\d+: {re.escape(p)}.loop", extra_files={"t.csv": good}),
        scen_case("trace-unknown-key", doc(speed="2"), rf"{F}:\d+: {re.escape(p)}.speed: unknown key", extra_files={"t.csv": good}),
        scen_case("trace-gzip", doc(), r".*/t\.csv: gzip-compressed", extra_files={"t.csv": gzip.compress(good.encode())}),
        scen_case("trace-bad-line", doc(), r".*/t\.csv:2: opcode", extra_files={"t.csv": "0,R,0,4096,1000\n0,X,0,4096,2000\n"}),
        scen_case("trace-backwards", doc(), r".*/t\.csv:2: time goes backwards",
                  extra_files={"t.csv": "0,R,0,4096,2000\n0,R,0,4096,1000\n"}),
        scen_case("trace-empty", doc(), rf"{F}:\d+: ", extra_files={"t.csv": ""}),
        scen_case("trace-dev-zero", doc("/dev/zero"), r"/dev/zero:1: ", timeout=20),
        scen_case("trace-iodepth", with_value(f"{T1}.workload.iodepth", "4", doc()), rf"{F}:\d+: {re.escape(T1)}.workload.iodepth",
                  extra_files={"t.csv": good}),
    ]
    # A relative trace is read from the scenario's folder, whatever the working directory.
    cases.append(scen_case("trace-relative-ok", doc("data/t.csv"), "", "ok", extra_files={"data/t.csv": good},
                           check=_report_ok))
    cases.append(scen_case("trace-crlf-ok", doc(), "", "ok", extra_files={"t.csv": good.replace("\n", "\r\n")},
                           check=_report_ok))
    return cases


def _report_ok(d):
    import json
    report = json.loads((d / "report.json").read_text())
    assert report["tenants"] and report["ios"]["bad_completions"] == 0, report["ios"]


def valid_edge_cases():
    """Valid scenarios at the edges of their ranges: they run, in bounded memory."""
    cases = []
    edges = [
        ("window-1us", with_value("window_us", "1")), ("window-max", with_value("window_us", "100000")),
        ("threads-16", with_value("dpu.threads", "16")), ("queue-depth-1", with_value("dpu.queue_depth", "1")),
        ("iodepth-max", with_value(f"{T0}.workload.iodepth", "65536")),
        ("segments-max", with_value(f"{T0}.workload.segments", "4095")),
        ("rate-zero", with_value(f"{T1}.workload.rate_iops", "0")),
        ("base-zero", with_value(f"{T1}.base", {"iops": "0", "mbps": "0"})),
        ("queues-16", with_value(f"{T0}.queues", "16")),
        ("sizes-1m", with_value(f"{T0}.workload.sizes", {"1m": "1"})),
        ("crlf", None), ("bom", None), ("dualbucket", with_value("scheduler", "dualbucket")),
        ("wild", with_value("scheduler", "wild")), ("cost-adjust", with_value("dpu.cost_adjust", "true")),
        ("estimate-error-max", with_value("dpu.estimate_error", "100")),
        ("header-max", with_value("dpu.header_bytes", "65536")),
    ]
    for label, doc in edges:
        if label == "crlf":
            text = Yaml(base_scenario()).text().replace("\n", "\r\n")
        elif label == "bom":
            text = "\ufeff" + Yaml(base_scenario()).text()
        else:
            text = Yaml(doc).text()
        cases.append(scen_case(f"sim-ok-{label}", text, "", "ok", check=_report_ok, timeout=60))
    # An open loop far above what the SA serves: the backlog limit stops it (docs/simulator.md, Memory).
    cases.append(scen_case("sim-rate-1e9", with_value("duration_ms", "2000", with_value(f"{T1}.workload.rate_iops", "1e9")),
                           r".*scenario\.yaml:\d+: tenants\[1\]", timeout=60))
    return cases


def sim_cli_cases():
    good = Yaml(base_scenario()).text()
    s = {"scenario.yaml": good}
    sc = "{d}/scenario.yaml"
    return [
        Case("sim-cli-unknown", SIM, [sc, "--frobnicate"], s, where=r"--frobnicate: unknown option"),
        Case("sim-cli-no-file", SIM, [], {}, where=r"no scenario file"),
        Case("sim-cli-two-files", SIM, [sc, sc], s, where=r"only one scenario"),
        Case("sim-cli-seed-missing", SIM, [sc, "--seed"], s, where=r"--seed: needs a value"),
        Case("sim-cli-seed-neg", SIM, [sc, "--seed", "-1"], s, where=r"--seed: expected an integer"),
        Case("sim-cli-seed-big", SIM, [sc, "--seed", "99999999999999999999"], s, where=r"--seed: "),
        Case("sim-cli-seed-text", SIM, [sc, "--seed=abc"], s, where=r"--seed: "),
        Case("sim-cli-scheduler", SIM, [sc, "--scheduler", "nope"], s, where=r"--scheduler: unknown"),
        Case("sim-cli-engine", SIM, [sc, "--engine", "nope", "--quiet"], s, where=r"--engine: "),
        Case("sim-cli-quiet-value", SIM, [sc, "--quiet=yes"], s, where=r"--quiet: takes no value"),
        Case("sim-cli-out-dir", SIM, [sc, "--out", "{d}", "--quiet"], s, where=r"--out: cannot write"),
        Case("sim-cli-out-missing-dir", SIM, [sc, "--out", "{d}/no/such/r.json", "--quiet"], s, where=r"--out: cannot write"),
        Case("sim-cli-csv-dir", SIM, [sc, "--csv", "{d}", "--quiet"], s, where=r"--csv: cannot write"),
        Case("sim-cli-csv-missing-dir", SIM, [sc, "--csv", "{d}/no/s.csv", "--quiet"], s, where=r"--csv: cannot write"),
        Case("sim-cli-out-value-missing", SIM, [sc, "--out"], s, where=r"--out: needs a value"),
        Case("sim-cli-profile-missing", SIM, [sc, "--profile", "{d}/none.yaml", "--quiet"], s, where=r".*/none\.yaml:1: "),
        Case("sim-cli-ok-out-existing", SIM, [sc, "--out", "{d}/report.json", "--quiet"], {**s, "report.json": "old"},
             expect="ok", check=_report_ok),
    ]


def profile_cases():
    good = Yaml(base_scenario()).text()
    base = {"threads": "2", "cpu_ns": {"read": {"base": "2000", "per_kib": "30"}, "write": {"base": "1900", "per_kib": "30"}},
            "swlimit_mbps": "2500"}
    P = r".*/host\.yaml"
    out = []
    muts = [("threads-0", with_value("threads", "0", base), "threads"),
            ("threads-text", with_value("threads", "many", base), "threads"),
            ("base-0", with_value("cpu_ns.read.base", "0", base), "cpu_ns.read.base"),
            ("swlimit-nan", with_value("swlimit_mbps", ".nan", base), "swlimit_mbps"),
            ("unknown", with_value("speed", "1", base), "speed"),
            ("missing-cpu", without("cpu_ns", base), "cpu_ns"),
            ("missing-write", without("cpu_ns.write", base), "cpu_ns.write"),
            ("cpu-list", with_value("cpu_ns", "[1]", base), "cpu_ns")]
    for label, doc, path in muts:
        out.append(Case(f"profile-{label}", SIM, ["{d}/scenario.yaml", "--profile", "{d}/host.yaml", "--quiet"],
                        {"scenario.yaml": good, "host.yaml": Yaml(doc).text()}, where=rf"{P}:\d+: {re.escape(path)}"))
    dup = Yaml(base).text().replace("threads: 2\n", "threads: 2\nthreads: 3\n")
    out.append(Case("profile-duplicate", SIM, ["{d}/scenario.yaml", "--profile", "{d}/host.yaml", "--quiet"],
                    {"scenario.yaml": good, "host.yaml": dup}, where=rf"{P}:2: threads: key given twice"))
    out.append(Case("profile-syntax", SIM, ["{d}/scenario.yaml", "--profile", "{d}/host.yaml", "--quiet"],
                    {"scenario.yaml": good, "host.yaml": "threads: [\n"}, where=rf"{P}:\d+: "))
    out.append(Case("profile-empty", SIM, ["{d}/scenario.yaml", "--profile", "{d}/host.yaml", "--quiet"],
                    {"scenario.yaml": good, "host.yaml": ""}, where=rf"{P}:1: "))
    out.append(Case("profile-folder", SIM, ["{d}/scenario.yaml", "--profile", "{d}/host.yaml", "--quiet"],
                    {"scenario.yaml": good, "host.yaml/x": ""}, where=rf"{P}(:1)?: .*folder"))
    return out


# ---- traces ----------------------------------------------------------------------------------

# Per format: the text before the records, two valid records (the second later), the fields of a
# record (separator, names), and what each field's bad values are.
FORMATS = {
    "cloudphysics": ("version,time,op,size,lbn\n", ["1,0.000100,28,4096,100", "1,0.000200,2a,8192,200"], ","),
    "alibaba": ("", ["7,R,0,4096,1000000", "7,W,4096,8192,1000100"], ","),
    "tencent": ("", ["1538323200,8,8,0,1234", "1538323201,16,16,1,1234"], ","),
    "msr": ("", ["128166372003061629,hm,0,Read,383496192,4096,1179", "128166372003071629,hm,0,Write,0,8192,100"], ","),
    "iolog2": ("fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n", ["/dev/sdb read 0 4096", "/dev/sdb write 4096 8192"], " "),
    "iolog3": ("fio version 3 iolog\n0 /dev/sdb add\n0 /dev/sdb open\n", ["10 /dev/sdb read 0 4096", "20 /dev/sdb write 4096 8192"], " "),
}


def trace_texts():
    """(label, format, bytes, line the error is on or None for a valid trace)."""
    out = []
    for fmt, (head, recs, sep) in FORMATS.items():
        h = head.count("\n")
        L = h + 2   # the second record's line
        out.append((f"{fmt}-ok", fmt, (head + "\n".join(recs) + "\n").encode(), None))
        out.append((f"{fmt}-crlf-ok", fmt, (head + "\n".join(recs) + "\n").replace("\n", "\r\n").encode(), None))
        fields = recs[1].split(sep)
        for i, f in enumerate(fields):
            for label, v in [("text", "x9"), ("neg", "-1"), ("empty", ""), ("huge", "9" * 30), ("nul", f[:1] + "\0" + f[1:])]:
                if fmt.startswith("iolog") and v == "":
                    continue
                if (fmt, i) in (("msr", 1), ("iolog2", 0), ("iolog3", 1)) and label in ("text", "huge", "neg"):
                    continue   # a host or file name may be any text
                bad = fields[:]
                bad[i] = v
                text = head + recs[0] + "\n" + sep.join(bad) + "\n"
                out.append((f"{fmt}-f{i}-{label}", fmt, text.encode(), L))
        out.append((f"{fmt}-extra-field", fmt, (head + recs[0] + "\n" + recs[1] + sep + "1\n").encode(), L))
        out.append((f"{fmt}-missing-field", fmt, (head + recs[0] + "\n" + sep.join(fields[:-1]) + "\n").encode(), L))
        if fmt != "iolog2":   # v2 has no timestamps: any order is a valid order
            out.append((f"{fmt}-backwards", fmt, (head + recs[1] + "\n" + recs[0] + "\n").encode(), L))
        out.append((f"{fmt}-long-line", fmt, (head + recs[0] + "\n" + recs[1] + "9" * (4 << 20) + "\n").encode(), L))
        out.append((f"{fmt}-nul-line", fmt, (head + recs[0] + "\n" + "\0" * 100 + "\n").encode(), L))
        out.append((f"{fmt}-non-utf8", fmt, (head + recs[0] + "\n").encode() + b"\xff\xfe\xfa" + b"\n", L))
    # Lengths: zero and above the descriptor's 16 MiB - 1.
    out += [("alibaba-len0", "alibaba", b"7,R,0,0,1000\n", 1), ("alibaba-len16m", "alibaba", b"7,R,0,16777216,1000\n", 1),
            ("alibaba-offset-huge", "alibaba", b"7,R,99999999999999999999,4096,1000\n", 1),
            ("cloudphysics-lbn-overflow", "cloudphysics", b"1,0.1,28,4096,36028797018963968\n", 1),
            ("cloudphysics-header-twice", "cloudphysics", b"version,time,op,size,lbn\nversion,time,op,size,lbn\n", 2),
            ("cloudphysics-time-decimals", "cloudphysics", b"1,0.0000000001,28,4096,1\n", 1),
            ("tencent-size-huge", "tencent", b"1538323200,8,99999999,0,1\n", 1),
            ("tencent-op-2", "tencent", b"1538323200,8,8,2,1\n", 1),
            ("msr-op", "msr", b"128166372003061629,hm,0,Trim,0,4096,1\n", 1),
            ("msr-host-blank", "msr", b"128166372003061629, ,0,Read,0,4096,1\n", 1),
            ("iolog2-no-version", "iolog2", b"/dev/sdb add\n", 1), ("iolog3-v2-header", "iolog3", b"fio version 2 iolog\n", 1),
            ("iolog2-not-open", "iolog2", b"fio version 2 iolog\n/dev/sdb add\n/dev/sdb read 0 4096\n", 3),
            ("iolog2-never-added", "iolog2", b"fio version 2 iolog\n/dev/sdb open\n", 2),
            ("iolog2-added-twice", "iolog2", b"fio version 2 iolog\n/dev/sdb add\n/dev/sdb add\n", 3),
            ("iolog3-wait", "iolog3", b"fio version 3 iolog\n0 /dev/sdb add\n0 /dev/sdb open\n5 /dev/sdb wait 10 0\n", 4),
            ("iolog2-wait-overflow", "iolog2", b"fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb wait 18446744073709551615 0\n", 4),
            ("iolog2-unknown-action", "iolog2", b"fio version 2 iolog\n/dev/sdb add\n/dev/sdb frob\n", 3),
            ("iolog2-empty", "iolog2", b"", 0), ("iolog3-empty", "iolog3", b"", 0)]
    return out


def trace2iolog_cases():
    cases = []
    for label, fmt, data, line in trace_texts():
        argv = ["trace2iolog", "--trace", "{d}/t.trace", "--format", fmt, "--out-dir", "{d}/out"]
        if line is None:
            cases.append(Case(f"t2i-{label}", HOST, argv, {"t.trace": data}, "ok", check=_iolog_ok))
        else:
            where = rf".*/t\.trace:{line}: " if line else r".*/t\.trace:\d+: "
            cases.append(Case(f"t2i-{label}", HOST, argv, {"t.trace": data}, where=where))
    for fmt in FORMATS:
        head = FORMATS[fmt][0]
        argv = ["trace2iolog", "--trace", "{d}/t.trace", "--format", fmt, "--out-dir", "{d}/out"]
        if not head.startswith("fio"):
            cases.append(Case(f"t2i-{fmt}-empty", HOST, argv, {"t.trace": b""}, where=r".*t\.trace.*nothing written"))
            cases.append(Case(f"t2i-{fmt}-blank-lines", HOST, argv, {"t.trace": b"\n\n  \n"}, where=r".*t\.trace.*nothing written"))
        cases.append(Case(f"t2i-{fmt}-gzip", HOST, argv, {"t.trace": gzip.compress((head + FORMATS[fmt][1][0] + "\n").encode())},
                          where=r".*/t\.trace: gzip-compressed"))
    cases.append(Case("t2i-cloudphysics-header-only", HOST,
                      ["trace2iolog", "--trace", "{d}/t.trace", "--format", "cloudphysics", "--out-dir", "{d}/out"],
                      {"t.trace": b"version,time,op,size,lbn\n"}, where=r".*t\.trace.*nothing written"))
    t = {"t.trace": b"7,R,0,4096,1000\n"}
    a = ["trace2iolog", "--trace", "{d}/t.trace", "--format", "alibaba"]
    cases += [
        Case("t2i-dev-zero", HOST, ["trace2iolog", "--trace", "/dev/zero", "--format", "alibaba", "--out-dir", "{d}/out"],
             {}, where=r"/dev/zero:1: ", timeout=20),
        Case("t2i-trace-folder", HOST, [*a, "--out-dir", "{d}/out"], {"t.trace/x": ""}, where=r".*/t\.trace: cannot open \(it is a folder\)"),
        Case("t2i-trace-missing", HOST, ["trace2iolog", "--trace", "{d}/none", "--format", "alibaba", "--out-dir", "{d}/o"], {},
             where=r".*/none: cannot open"),
        Case("t2i-no-out-dir", HOST, a, t, where=r"trace2iolog: --out-dir is required"),
        Case("t2i-out-dir-is-file", HOST, [*a, "--out-dir", "{d}/t.trace"], t, where=r"--out-dir: "),
        Case("t2i-out-dir-under-file", HOST, [*a, "--out-dir", "{d}/t.trace/sub"], t, where=r"--out-dir: "),
        Case("t2i-bad-format", HOST, ["trace2iolog", "--trace", "{d}/t.trace", "--format", "csv", "--out-dir", "{d}/o"], t,
             where=r"--format: unknown trace format"),
        Case("t2i-no-trace", HOST, ["trace2iolog", "--format", "alibaba", "--out-dir", "{d}/o"], t, where=r"--trace and --format"),
        Case("t2i-replay-option", HOST, [*a, "--out-dir", "{d}/o", "--tenants", "x"], t, where=r"--tenants: unknown option"),
        Case("t2i-map-bad", HOST, [*a, "--out-dir", "{d}/o", "--device-map", "7"], t, where=r"--device-map: expected DEV=NAME"),
        Case("t2i-map-slash", HOST, [*a, "--out-dir", "{d}/o", "--device-map", "7=a/b"], t, where=r"--device-map: NAME"),
        Case("t2i-map-dotdot", HOST, [*a, "--out-dir", "{d}/o", "--device-map", "7=.."], t, where=r"--device-map: NAME"),
        Case("t2i-map-twice", HOST, [*a, "--out-dir", "{d}/o", "--device-map", "7=a,7=b"], t, where=r"--device-map: device '7' mapped twice"),
        Case("t2i-map-none-mapped", HOST, [*a, "--out-dir", "{d}/o", "--device-map", "8=a", "--only-mapped"], t,
             where=r".*t\.trace.*nothing written"),
        Case("t2i-no-command", HOST, [], {}, where=r"no command given"),
        Case("t2i-unknown-command", HOST, ["convert"], {}, where=r"convert: unknown command"),
        Case("t2i-format-missing-value", HOST, ["trace2iolog", "--trace", "{d}/t.trace", "--format"], t, where=r"--format: needs a value"),
        Case("t2i-only-mapped-value", HOST, [*a, "--out-dir", "{d}/o", "--only-mapped=1"], t, where=r"--only-mapped: takes no value"),
    ]
    return cases


def _iolog_ok(d):
    logs = list((d / "out").glob("*.iolog"))
    assert logs, "no iolog written"
    text = logs[0].read_text()
    assert text.startswith("fio version 3 iolog\n") and (" read " in text or " write " in text), text[:200]


def replay_cases():
    sc = Yaml(base_scenario())
    doc = base_scenario()
    doc["tenants"][1]["workload"] = {"mode": "trace", "trace": {"device": "7"}}
    scen = Yaml(doc).text()
    t = {"t.trace": "7,R,0,4096,1000\n7,W,0,4096,2000\n", "tenants.yaml": scen}
    r = ["replay", "--trace", "{d}/t.trace", "--format", "alibaba", "--tenants", "{d}/tenants.yaml", "--quiet"]
    cases = [
        Case("replay-ok", HOST, [*r, "--out", "{d}/report.json"], t, "ok", check=_report_ok),
        Case("replay-no-tenants", HOST, r[:5] + ["--quiet"], t, where=r"replay: --tenants is required"),
        Case("replay-no-trace-tenant", HOST, [*r], {**t, "tenants.yaml": sc.text()},
             where=r".*/tenants\.yaml:1: tenants: no tenant has workload\.mode: trace"),
        Case("replay-out-dir", HOST, [*r, "--out", "{d}"], t, where=r"--out: cannot write"),
        Case("replay-out-missing-dir", HOST, [*r, "--out", "{d}/no/r.json"], t, where=r"--out: cannot write"),
        Case("replay-duration-0", HOST, [*r, "--duration-ms", "0"], t, where=r"--duration-ms: "),
        Case("replay-duration-nan", HOST, [*r, "--duration-ms", "nan"], t, where=r"--duration-ms: "),
        Case("replay-duration-neg", HOST, [*r, "--duration-ms", "-5"], t, where=r"--duration-ms: "),
        Case("replay-duration-text", HOST, [*r, "--duration-ms", "5ms"], t, where=r"--duration-ms: "),
        Case("replay-scheduler", HOST, [*r, "--scheduler", "fair"], t, where=r"--scheduler: unknown"),
        Case("replay-engine", HOST, [*r, "--engine", "fpga"], t, where=r"--engine: "),
        Case("replay-out-dir-option", HOST, [*r, "--out-dir", "{d}/o"], t, where=r"--out-dir: unknown option"),
        Case("replay-tenants-missing", HOST, [*r[:5], "--tenants", "{d}/none.yaml"], t, where=r".*/none\.yaml: cannot open"),
        Case("replay-tenants-folder", HOST, [*r[:5], "--tenants", "{d}"], t, where=r".*: is a folder"),
        Case("replay-bad-trace-line", HOST, r, {**t, "t.trace": "7,R,0,4096,1000\n7,R,0,4096\n"}, where=r".*/t\.trace:2: expected 5 fields"),
        Case("replay-trace-backwards", HOST, r, {**t, "t.trace": "7,R,0,4096,2000\n7,R,0,4096,1000\n"},
             where=r".*/t\.trace:2: time goes backwards"),
        Case("replay-trace-gzip", HOST, r, {**t, "t.trace": gzip.compress(b"7,R,0,4096,1000\n")}, where=r".*/t\.trace: gzip"),
        Case("replay-trace-long-line", HOST, r, {**t, "t.trace": "7,R,0,4096," + "1" * (4 << 20) + "\n"}, where=r".*/t\.trace:1: "),
        Case("replay-trace-no-records", HOST, r, {**t, "t.trace": "\n\n"}, where=r".*tenants\.yaml:\d+: .*no read or write record"),
    ]
    for c in cases:
        c.sub = "replay"
    return cases


# ---- the gateway (start-up only: every case fails before it listens) -------------------------

def gateway_cases():
    good = Yaml(base_scenario()).text()
    s = {"scenario.yaml": good}
    g = ["--config", "{d}/scenario.yaml", "--unix", "{d}/gw.sock"]
    bad_scen = Yaml(with_value("dpu.threads", "0")).text()
    cases = [
        Case("gw-no-config", GATEWAY, ["--unix", "{d}/gw.sock"], {}, where=r"--config SCENARIO\.yaml is required"),
        Case("gw-no-listener", GATEWAY, ["--config", "{d}/scenario.yaml"], s, where=r"exactly one of --unix"),
        Case("gw-both-listeners", GATEWAY, [*g, "--tcp", "127.0.0.1:1"], s, where=r"exactly one of --unix"),
        Case("gw-unknown", GATEWAY, [*g, "--turbo"], s, where=r"unknown argument '--turbo'"),
        Case("gw-config-missing", GATEWAY, ["--config", "{d}/none.yaml", "--unix", "{d}/gw.sock"], {}, where=r".*/none\.yaml: cannot open"),
        Case("gw-config-folder", GATEWAY, ["--config", "{d}", "--unix", "{d}/gw.sock"], {}, where=r".*: is a folder"),
        Case("gw-config-bad-key", GATEWAY, g, {"scenario.yaml": bad_scen},
             where=rf".*/scenario\.yaml:{Yaml(base_scenario()).at['dpu.threads']}: dpu\.threads: "),
        # The line of the sa_loop mapping's first key, where yaml-cpp marks the mapping.
        Case("gw-sa-loop", GATEWAY, g, {"scenario.yaml": Yaml(loop_scenario()).text()},
             where=rf".*/scenario\.yaml:{Yaml(loop_scenario()).at['dpu.sa_loop.policy']}: dpu\.sa_loop: simulator only"),
        Case("gw-config-empty", GATEWAY, g, {"scenario.yaml": ""}, where=r".*/scenario\.yaml:1: "),
        Case("gw-config-non-utf8", GATEWAY, g, {"scenario.yaml": good.replace("victim", "vict\xefm").encode("latin-1")},
             where=r".*/scenario\.yaml:\d+: "),
        Case("gw-tcp-port", GATEWAY, ["--config", "{d}/scenario.yaml", "--tcp", "127.0.0.1:99999"], s, where=r"--tcp: bad port"),
        Case("gw-tcp-noport", GATEWAY, ["--config", "{d}/scenario.yaml", "--tcp", "127.0.0.1"], s, where=r"--tcp: expected ADDR:PORT"),
        Case("gw-tcp-name", GATEWAY, ["--config", "{d}/scenario.yaml", "--tcp", "localhost:10809"], s, where=r"--tcp: 'localhost'"),
        Case("gw-tcp-remote", GATEWAY, ["--config", "{d}/scenario.yaml", "--tcp", "0.0.0.0:10809"], s, where=r"--tcp: 0\.0\.0\.0 is not a loopback"),
        Case("gw-export-size-0", GATEWAY, [*g, "--export-size", "0"], s, where=r"--export-size: "),
        Case("gw-export-size-odd", GATEWAY, [*g, "--export-size", "1000"], s, where=r"--export-size: "),
        Case("gw-export-size-huge", GATEWAY, [*g, "--export-size", "2000t"], s, where=r"--export-size: "),
        Case("gw-export-size-neg", GATEWAY, [*g, "--export-size", "-4096"], s, where=r"--export-size: "),
        Case("gw-export-size-suffix", GATEWAY, [*g, "--export-size", "1q"], s, where=r"--export-size: "),
        Case("gw-max-conns-0", GATEWAY, [*g, "--max-conns", "0"], s, where=r"--max-conns: "),
        Case("gw-handshake-timeout", GATEWAY, [*g, "--handshake-timeout", "1"], s, where=r"--handshake-timeout: "),
        Case("gw-tenant-buffer", GATEWAY, [*g, "--tenant-buffer", "4k"], s, where=r"--tenant-buffer must be"),
        Case("gw-buffer-small", GATEWAY, [*g, "--buffer", "1m"], s, where=r"--tenant-buffer must be"),
        Case("gw-seed-neg", GATEWAY, [*g, "--seed", "-3"], s, where=r"--seed: "),
        Case("gw-seed-missing", GATEWAY, [*g, "--seed"], s, where=r"--seed: needs a value"),
        Case("gw-scheduler", GATEWAY, [*g, "--scheduler", "fair"], s, where=r".*scheduler.*fair"),
        Case("gw-engine", GATEWAY, [*g, "--engine", "fpga"], s, where=r".*fpga"),
        Case("gw-profile-missing", GATEWAY, [*g, "--profile", "{d}/none.yaml"], s, where=r".*/none\.yaml:1: "),
        Case("gw-data-dir-missing", GATEWAY, [*g, "--data-dir", "{d}/no/such"], s, where=r"--data-dir: "),
        Case("gw-data-dir-file", GATEWAY, [*g, "--data-dir", "{d}/scenario.yaml"], s, where=r"--data-dir: "),
        Case("gw-unix-missing-dir", GATEWAY, ["--config", "{d}/scenario.yaml", "--unix", "{d}/no/such/gw.sock"], s,
             where=r"--unix: "),
        Case("gw-unix-long", GATEWAY, ["--config", "{d}/scenario.yaml", "--unix", "{d}/" + "s" * 200], s, where=r"--unix: path longer"),
        Case("gw-unix-regular-file", GATEWAY, ["--config", "{d}/scenario.yaml", "--unix", "{d}/scenario.yaml"], s,
             where=r"--unix: "),
        Case("gw-out-dir", GATEWAY, [*g, "--out", "{d}"], s, where=r"--out: cannot write"),
        Case("gw-out-missing-dir", GATEWAY, [*g, "--out", "{d}/no/r.json"], s, where=r"--out: cannot write"),
        Case("gw-control-missing-dir", GATEWAY, [*g, "--control", "{d}/no/ctl.sock"], s, where=r"--control: "),
    ]
    for c in cases:
        c.timeout = 15
        if not any(a == "--export-size" for a in c.argv):
            c.argv[:0] = ["--export-size", "64m"]   # a memory export fits the 2 GiB limit beside the engine
    return cases


# ---- burstgate-cost --------------------------------------------------------------------------

def cost_cases():
    mix = "A read 4k 0.5\nB write 64k 0.5\n"
    m = {"mix.txt": mix}
    M = r".*/mix\.txt"
    lines = [("fields-3", "A read 4k\n", 1), ("fields-5", "A read 4k 1 x\n", 1), ("product-Z", "Z read 4k 1\n", 1),
             ("product-AB", "AB read 4k 1\n", 1), ("op", "A trim 4k 1\n", 1), ("size-0", "A read 0 1\n", 1),
             ("size-16m", "A read 16m 1\n", 1), ("size-neg", "A read -4k 1\n", 1), ("size-g", "A read 1g 1\n", 1),
             ("size-frac", "A read 1.5k 1\n", 1), ("size-huge", "A read 99999999999999999999999 1\n", 1),
             ("share-0", "A read 4k 0\n", 1), ("share-neg", "A read 4k -1\n", 1), ("share-nan", "A read 4k nan\n", 1),
             ("share-inf", "A read 4k inf\n", 1), ("share-text", "A read 4k half\n", 1), ("share-1e999", "A read 4k 1e999\n", 1),
             ("second-line", "A read 4k 0.5\nA read 4k\n", 2), ("nul", "A read 4k 0.5\nA re\0ad 4k 0.5\n", 2),
             ("non-utf8", "A read 4k 0.5\n\xe9 read 4k 0.5\n", 2), ("long-line", "A read 4k 0.5\nA read 4k " + "5" * 100000 + "\n", 2)]
    cases = [Case(f"cost-mix-{label}", COST, ["--mix", "{d}/mix.txt"],
                  {"mix.txt": text.encode("latin-1") if label == "non-utf8" else text}, where=rf"{M}:{line}: ")
             for label, text, line in lines]
    cases += [
        Case("cost-mix-sum", COST, ["--mix", "{d}/mix.txt"], {"mix.txt": "A read 4k 0.5\nA write 4k 0.6\n"}, where=rf"{M}: the shares add up"),
        Case("cost-mix-empty", COST, ["--mix", "{d}/mix.txt"], {"mix.txt": ""}, where=rf"{M}:1: empty mix"),
        Case("cost-mix-comments", COST, ["--mix", "{d}/mix.txt"], {"mix.txt": "# a\n\n# b\n"}, where=rf"{M}:3: empty mix"),
        Case("cost-mix-folder", COST, ["--mix", "{d}/mix.txt"], {"mix.txt/x": ""}, where=rf"--mix: .*mix\.txt.*folder"),
        Case("cost-mix-missing", COST, ["--mix", "{d}/none"], {}, where=r"--mix: cannot open"),
        Case("cost-mix-dev-zero", COST, ["--mix", "/dev/zero"], {}, where=r"/dev/zero:1: ", timeout=20),
        Case("cost-unknown", COST, ["--fast"], {}, where=r"--fast: unknown option"),
        Case("cost-stray", COST, ["extra"], {}, where=r"extra: unexpected argument"),
        Case("cost-random-0", COST, ["--random", "0"], {}, where=r"--random: "),
        Case("cost-random-text", COST, ["--random", "many"], {}, where=r"--random: "),
        Case("cost-random-neg", COST, ["--random", "-1"], {}, where=r"--random: "),
        Case("cost-seed-big", COST, ["--seed", "4294967296"], {}, where=r"--seed: "),
        Case("cost-header-neg", COST, ["--header", "-1"], {}, where=r"--header: "),
        Case("cost-header-huge", COST, ["--header", "99999999999"], {}, where=r"--header: "),
        Case("cost-mix-missing-value", COST, ["--mix"], {}, where=r"--mix: needs a value"),
        Case("cost-vop-value", COST, ["--vop=yes"], {}, where=r"--vop: takes no value"),
        Case("cost-ok-mix", COST, ["--mix", "{d}/mix.txt", "--random", "1000"], m, "ok"),
        Case("cost-ok-crlf", COST, ["--mix", "{d}/mix.txt"], {"mix.txt": mix.replace("\n", "\r\n")}, "ok"),
    ]
    return cases


# ---- burstgate-lsm (argument checks and its replay trace) ------------------------------------

def lsm_cases():
    cases = []
    args = [("command-missing", [], r"missing COMMAND"), ("command-unknown", ["fig99"], r"unknown command 'fig99'"),
            ("duration-0", ["run", "--duration", "0"], r"--duration: "), ("duration-text", ["run", "--duration", "x"], r"--duration: "),
            ("warmup-ge", ["run", "--duration", "5", "--warmup", "5"], r"--warmup must be less"),
            ("keys-small", ["run", "--keys", "10"], r"--keys: "), ("iops-0", ["run", "--iops", "0"], r"--iops: "),
            ("threads-0", ["run", "--threads", "0"], r"--threads: "), ("intensity-nan", ["run", "--intensity", "nan"], r"--intensity: "),
            ("intensity-inf", ["run", "--intensity", "inf"], r"--intensity: "), ("intensity-0", ["run", "--intensity", "0"], r"--intensity: "),
            ("cache-share-2", ["run", "--cache-share", "2"], r"--cache-share: "), ("read-ratio", ["run", "--read-ratio", "-0.1"], r"--read-ratio: "),
            ("amplitude", ["run", "--amplitude", "1.5"], r"--amplitude: "), ("period-0", ["run", "--period", "0"], r"--period: "),
            ("key-ranges-0", ["run", "--key-ranges", "0"], r"--key-ranges: "),
            ("key-dist-one", ["run", "--key-dist-a", "0.1"], r"--key-dist-a / --key-dist-b"),
            ("stabilizer", ["run", "--stabilizer", "loose"], r"--stabilizer: "),
            ("borrow-slices", ["run", "--stabilizer", "borrow", "--token-slices", "4"], r"--stabilizer borrow"),
            ("meta", ["run", "--meta", "disk"], r"--meta: "), ("slices-0", ["run", "--token-slices", "0"], r"--token-slices: "),
            ("store-on-fig", ["fig14", "--store", "rocksdb"], r"--store applies to 'run' only"),
            ("time-scale-on-run", ["run", "--time-scale", "2"], r"--time-scale applies to 'replay' only"),
            ("unknown-option", ["run", "--fast"], r"unknown option '--fast'"), ("stray", ["run", "extra"], r"unexpected argument 'extra'"),
            ("seed-neg", ["run", "--seed", "-1"], r"--seed: "), ("json-missing-value", ["run", "--json"], r"--json: needs a value"),
            ("ranges-gt-keys", ["run", "--keys", "1000", "--key-ranges", "2000"], r"--key-ranges: more ranges"),
            ("volume", ["run", "--volume", "st1", "--duration", "1", "--warmup", "0", "--keys", "1000"], r".*st1"),
            ("store", ["run", "--store", "leveldb", "--duration", "1", "--warmup", "0", "--keys", "1000"], r".*leveldb"),
            ("workload", ["run", "--workload", "tpcc", "--duration", "1", "--warmup", "0", "--keys", "1000"], r".*tpcc"),
            ("fig3-json-missing-dir", ["fig3", "--json", "{d}/no/f.json"], r"--json: cannot write"),
            ("fig4-json-dir", ["fig4", "--json", "{d}"], r"--json: cannot write"),
            ("fig14-json-missing-dir", ["fig14", "--json", "{d}/no/f.json"], r"--json: cannot write"),
            ("replay-no-trace", ["replay"], r"replay needs a TRACE"),
            ("replay-option-as-trace", ["replay", "--json", "x"], r"replay needs a TRACE")]
    for label, argv, where in args:
        cases.append(Case(f"lsm-{label}", LSM, argv, {}, where=where, timeout=20))
    R = r".*/t\.io"
    head = "# burstgate block-I/O trace v1: t_ns thread op source level file offset bytes\n"
    rec = "1000 0 R user 0 1 0 4096\n"
    bad = [("fields", "1000 0 R user 0 1 0\n"), ("extra", "1000 0 R user 0 1 0 4096 9\n"), ("op", "1000 0 X user 0 1 0 4096\n"),
           ("source", "1000 0 R disk 0 1 0 4096\n"), ("level", "1000 0 R user 64 1 0 4096\n"),
           ("level-neg", "1000 0 R user -1 1 0 4096\n"), ("time-neg", "-5 0 R user 0 1 0 4096\n"),
           ("bytes-0", "1000 0 R user 0 1 0 0\n"), ("bytes-neg", "1000 0 R user 0 1 0 -4096\n"),
           ("thread-neg", "1000 -1 R user 0 1 0 4096\n"), ("offset-neg", "1000 0 R user 0 1 -4096 4096\n"),
           ("file-neg", "1000 0 R user 0 -1 0 4096\n"), ("offset-huge", "1000 0 R user 0 1 99999999999999999999999 4096\n"),
           ("time-text", "1e3 0 R user 0 1 0 4096\n"), ("nul", "1000 0 R us\0er 0 1 0 4096\n"),
           ("long-line", "1000 0 R user 0 1 0 " + "4" * (1 << 20) + "\n")]
    for label, line in bad:
        cases.append(Case(f"lsm-replay-{label}", LSM, ["replay", "{d}/t.io", "--quiet"], {"t.io": head + rec + line},
                          where=rf"{R}:3: ", timeout=20))
    cases += [
        Case("lsm-replay-empty", LSM, ["replay", "{d}/t.io", "--quiet"], {"t.io": head}, where=rf"{R}(:\d+)?: .*no I/O", timeout=20),
        # Memory is bounded by refusing the record after the cap, at its line (the 4th here).
        Case("lsm-replay-too-many", LSM, ["replay", "{d}/t.io", "--quiet", "--max-records", "2"], {"t.io": head + rec * 3},
             where=rf"{R}:4: more than 2 I/O records", timeout=20),
        Case("lsm-max-records-not-replay", LSM, ["fig3", "--max-records", "2"], {}, where=r".*--max-records applies to 'replay' only", timeout=20),
        Case("lsm-replay-missing", LSM, ["replay", "{d}/none.io"], {}, where=r".*/none\.io: cannot open", timeout=20),
        Case("lsm-replay-folder", LSM, ["replay", "{d}/t.io"], {"t.io/x": ""}, where=rf"{R}: .*folder", timeout=20),
        Case("lsm-replay-dev-zero", LSM, ["replay", "/dev/zero"], {}, where=r"/dev/zero:1: ", timeout=20),
        Case("lsm-replay-json-missing-dir", LSM, ["replay", "{d}/t.io", "--json", "{d}/no/r.json"], {"t.io": head + rec},
             where=r"--json: cannot write", timeout=20),
        Case("lsm-replay-time-scale", LSM, ["replay", "{d}/t.io", "--time-scale", "-1"], {"t.io": head + rec},
             where=r"--time-scale: ", timeout=20),
        Case("lsm-replay-allocator", LSM, ["replay", "{d}/t.io", "--allocator", "xx", "--quiet"], {"t.io": head + rec},
             where=r".*xx", timeout=20),
        Case("lsm-replay-ok", LSM, ["replay", "{d}/t.io", "--quiet", "--json", "{d}/r.json"], {"t.io": head + rec + rec.replace("1000", "2000")},
             "ok", check=lambda d: (d / "r.json").read_text(), timeout=20),
    ]
    return cases


# ---- the Python subcommands -----------------------------------------------------------------

def _report(scenario="s", tenants=("victim", "bully"), scheduler="bios"):
    import json
    ts = [{"name": n, "iops": 100.0, "mbps": 0.4, "throttled": 0, "deferred_ios": 0, "generated": 10, "finished": 10,
           "lat_us": {k: 10.0 for k in ("avg", "p50", "p90", "p99", "p999", "p9999", "p99999", "max")} | {"count": 10},
           "hist_us": [[8.0, 5], [12.0, 5]]} for n in tenants]
    return json.dumps({"scenario": scenario, "engine": "model", "scheduler": scheduler, "seed": 1, "tenants": ts}, indent=1)


SERIES_HEAD = ("window,t_ms,tenant,iops,mbps,alloc_cpu_ns,alloc_ingress_B,alloc_egress_B,alloc_swlimit_B,deferrals,"
               "lat_avg_us,lat_max_us,sa_p95_us,sa_n\n")


def _series(rows=8, p95="120", mbps="100", tenants=("victim",)):
    out = SERIES_HEAD
    for w in range(rows):
        for t in tenants:
            out += f"{w},{w + 1},{t},1000,{mbps},1,1,1,1,0,50,80,{p95},32\n"
    return out


def plot_cases():
    import json
    r = {"a.json": _report()}
    P = ["plot", "{d}/a.json", "--out", "{d}/png"]
    A = r".*/a\.json"

    def rep(mut):
        d = json.loads(_report())
        mut(d)
        return json.dumps(d)

    def setp(path, value):
        def mut(d):
            c = d
            for k in path[:-1]:
                c = c[k]
            c[path[-1]] = value
        return mut

    def delp(path):
        def mut(d):
            c = d
            for k in path[:-1]:
                c = c[k]
            del c[path[-1]]
        return mut

    muts = [("tenants-int", setp(["tenants"], 5)), ("tenants-empty", setp(["tenants"], [])),
            ("tenant-str", setp(["tenants", 0], "x")), ("name-missing", delp(["tenants", 0, "name"])),
            ("name-int", setp(["tenants", 0, "name"], 3)), ("hist-str", setp(["tenants", 0, "hist_us"], "x")),
            ("hist-pair", setp(["tenants", 0, "hist_us"], [[1]])), ("hist-neg", setp(["tenants", 0, "hist_us"], [[1.0, -5]])),
            ("hist-text", setp(["tenants", 0, "hist_us"], [["a", 1]])), ("lat-missing", delp(["tenants", 0, "lat_us"])),
            ("lat-p99-missing", delp(["tenants", 0, "lat_us", "p99"])), ("lat-str", setp(["tenants", 0, "lat_us", "avg"], "x")),
            ("scenario-int", setp(["scenario"], 5)),
            ("scheduler-list", setp(["scheduler"], ["bios"])), ("no-scenario", delp(["scenario"])),
            ("iops-str", setp(["tenants", 0, "iops"], "x"))]
    cases = [Case(f"plot-report-{label}", "plot", P, {"a.json": rep(m)}, where=rf"burstgate plot: {A}: ") for label, m in muts]
    cases += [
        Case("plot-truncated", "plot", P, {"a.json": _report()[:200]}, where=rf"burstgate plot: {A}:\d+: not JSON"),
        Case("plot-non-utf8", "plot", P, {"a.json": _report().encode().replace(b"victim", b"vict\xefm")}, where=rf"burstgate plot: {A}: not UTF-8"),
        Case("plot-array", "plot", P, {"a.json": "[1, 2]"}, where=rf"burstgate plot: {A}: "),
        Case("plot-empty", "plot", P, {"a.json": ""}, where=rf"burstgate plot: {A}:1: not JSON"),
        Case("plot-nan", "plot", P, {"a.json": _report().replace('"avg": 10.0', '"avg": NaN', 1)}, where=rf"burstgate plot: {A}: "),
        Case("plot-deep", "plot", P, {"a.json": "[" * 100000 + "]" * 100000}, where=rf"burstgate plot: {A}: "),
        Case("plot-missing", "plot", ["plot", "{d}/none.json", "--out", "{d}/png"], {}, where=r"burstgate plot: .*/none\.json: "),
        Case("plot-folder", "plot", ["plot", "{d}/a.json", "--out", "{d}/png"], {"a.json/x": ""}, where=rf"burstgate plot: {A}: "),
        Case("plot-mixed-scenarios", "plot", ["plot", "{d}/a.json", "{d}/b.json", "--out", "{d}/png"],
             {**r, "b.json": _report("other")}, where=r"burstgate plot: .*/b\.json: scenario 'other'"),
        Case("plot-mixed-tenants", "plot", ["plot", "{d}/a.json", "{d}/b.json", "--out", "{d}/png"],
             {**r, "b.json": _report(tenants=("victim",))}, where=r"burstgate plot: .*/b\.json: tenants"),
        Case("plot-out-file", "plot", ["plot", "{d}/a.json", "--out", "{d}/a.json"], r, where=r"burstgate plot: --out .*a\.json: exists"),
        Case("plot-out-under-file", "plot", ["plot", "{d}/a.json", "--out", "{d}/a.json/sub"], r, where=r"burstgate plot: --out "),
        Case("plot-csv-more", "plot", [*P, "--csv", "{d}/s.csv", "--csv", "{d}/s.csv"], {**r, "s.csv": _series()},
             where=r"burstgate plot: 2 --csv series but 1 reports"),
        Case("plot-csv-columns", "plot", [*P, "--csv", "{d}/s.csv"], {**r, "s.csv": "a,b\n1,2\n"}, where=r"burstgate plot: .*/s\.csv:1: not"),
        Case("plot-csv-number", "plot", [*P, "--csv", "{d}/s.csv"], {**r, "s.csv": _series().replace(",1000,", ",lots,", 1)},
             where=r"burstgate plot: .*/s\.csv:2: iops"),
        Case("plot-csv-empty", "plot", [*P, "--csv", "{d}/s.csv"], {**r, "s.csv": ""}, where=r"burstgate plot: .*/s\.csv:1: "),
        Case("plot-csv-header-only", "plot", [*P, "--csv", "{d}/s.csv"], {**r, "s.csv": SERIES_HEAD}, where=r"burstgate plot: .*/s\.csv: no rows"),
        Case("plot-csv-non-utf8", "plot", [*P, "--csv", "{d}/s.csv"], {**r, "s.csv": _series().encode().replace(b"victim", b"v\xffm")},
             where=r"burstgate plot: .*/s\.csv: not UTF-8"),
        Case("plot-csv-nul", "plot", [*P, "--csv", "{d}/s.csv"], {**r, "s.csv": _series().replace("victim", "vi\0m", 1)},
             where=r"burstgate plot: .*/s\.csv:\d+: "),
        Case("plot-csv-inf", "plot", [*P, "--csv", "{d}/s.csv"], {**r, "s.csv": _series().replace(",1000,", ",inf,", 1)},
             where=r"burstgate plot: .*/s\.csv:2: iops"),
        # burstgate-sim allows any name without quotes: the PNG stays inside --out.
        Case("plot-scenario-slash-ok", "plot", P, {"a.json": rep(setp(["scenario"], "../a/b"))}, "ok",
             check=lambda d: (d / "png" / "_a_b-cdf.png").stat()),
        Case("plot-ok", "plot", [*P, "--csv", "{d}/s.csv"], {**r, "s.csv": _series().replace("\n", "\r\n")}, "ok",
             check=lambda d: [(d / "png" / "s-cdf.png").stat(), (d / "png" / "s-series.png").stat()]),
    ]
    return cases


def compare_cases():
    import json
    r = {"a.json": _report()}
    A = r".*/a\.json"
    d0 = json.loads(_report())
    del d0["tenants"][0]["lat_us"]["p9999"]
    d1 = json.loads(_report())
    d1["tenants"][0]["throttled"] = "many"
    d2 = json.loads(_report())
    d2["tenants"][0]["lat_us"]["avg"] = None
    return [
        Case("compare-no-tenant", "compare", ["compare", "{d}/a.json", "--tenant", "ghost"], r, where=rf"burstgate compare: {A}: no tenant named 'ghost'"),
        Case("compare-lat-missing", "compare", ["compare", "{d}/a.json"], {"a.json": json.dumps(d0)}, where=rf"burstgate compare: {A}: "),
        Case("compare-throttled-str", "compare", ["compare", "{d}/a.json"], {"a.json": json.dumps(d1)}, where=rf"burstgate compare: {A}: "),
        Case("compare-avg-null", "compare", ["compare", "{d}/a.json"], {"a.json": json.dumps(d2)}, where=rf"burstgate compare: {A}: "),
        Case("compare-non-utf8", "compare", ["compare", "{d}/a.json"], {"a.json": b"\xff\xfe{}"}, where=rf"burstgate compare: {A}: not UTF-8"),
        Case("compare-truncated", "compare", ["compare", "{d}/a.json"], {"a.json": _report()[:-30]}, where=rf"burstgate compare: {A}:\d+: not JSON"),
        Case("compare-not-report", "compare", ["compare", "{d}/a.json"], {"a.json": '{"a": 1}'}, where=rf"burstgate compare: {A}: not a burstgate-sim"),
        Case("compare-no-args", "compare", ["compare"], {}, where=r"usage: burstgate compare"),
        Case("compare-ok", "compare", ["compare", "{d}/a.json", "{d}/a.json"], r, "ok"),
    ]


def fit_alpha_cases():
    s = {"s.csv": _series()}
    F = ["fit-alpha", "{d}/s.csv"]
    S = r".*/s\.csv"
    cases = [Case(f"fit-mu-{label}", "fit-alpha", [*F, "--mu-mbps", v], s, where=r"usage: burstgate fit-alpha|.*--mu-mbps")
             for label, v in [("nan", "nan"), ("inf", "inf"), ("zero", "0"), ("neg", "-5"), ("text", "fast")]]
    cases += [Case(f"fit-percentile-{label}", "fit-alpha", [*F, "--mu-mbps", "24000", "--percentile", v], s,
                   where=r"burstgate fit-alpha: --percentile|usage: burstgate fit-alpha")
              for label, v in [("nan", "nan"), ("one", "1"), ("big", "1.5"), ("text", "p95"), ("zero", "0")]]
    csvs = [("nan-mbps", _series(mbps="nan"), r":2: "), ("inf-p95", _series(p95="inf"), r":2: "),
            ("neg-p95", _series(p95="-5"), r":2: "), ("text-mbps", _series(mbps="x"), r":2: "),
            ("missing-col", "t_ms,tenant\n1,a\n", r":1: "), ("empty", "", r":1: "), ("header-only", SERIES_HEAD, r": no window"),
            ("short-row", SERIES_HEAD + "0,1,victim,1000\n", r":2: "), ("no-sa", _series(p95=""), r": no window"),
            ("lambda-ge-mu", _series(mbps="4000"), r""), ("nul", _series().replace("victim", "v\0m", 1), r":\d+: ")]
    for label, text, where in csvs:
        pre = S if label != "lambda-ge-mu" else ""
        cases.append(Case(f"fit-csv-{label}", "fit-alpha", [*F, "--mu-mbps", "24000"], {"s.csv": text},
                          where=rf"burstgate fit-alpha: {pre}{where}"))
    cases += [
        Case("fit-non-utf8", "fit-alpha", [*F, "--mu-mbps", "24000"], {"s.csv": _series().encode().replace(b"victim", b"\xff")},
             where=rf"burstgate fit-alpha: {S}: not UTF-8"),
        Case("fit-warmup-neg", "fit-alpha", [*F, "--mu-mbps", "24000", "--warmup-ms", "-1"], s, where=r"usage: burstgate fit-alpha"),
        Case("fit-min-samples-neg", "fit-alpha", [*F, "--mu-mbps", "24000", "--min-samples", "-1"], s,
             where=r"burstgate fit-alpha: --min-samples|usage: burstgate fit-alpha"),
        Case("fit-missing", "fit-alpha", ["fit-alpha", "{d}/none.csv", "--mu-mbps", "24000"], {}, where=r"burstgate fit-alpha: .*/none\.csv: "),
        Case("fit-no-mu", "fit-alpha", F, s, where=r"usage: burstgate fit-alpha"),
        Case("fit-ok", "fit-alpha", [*F, "--mu-mbps", "24000"], {"s.csv": _series().replace("\n", "\r\n")}, "ok"),
    ]
    return cases


def sweep_cases():
    scen = Yaml(base_scenario()).text()
    base = "scenario: scen.yaml\nset: {duration_ms: 2}\nseeds: [1]\nschedulers: [bios]\n"
    W = ["--workers", "0", "--quiet"]
    S = r".*/spec\.yaml"

    def case(label, spec, where, extra=(), files=None):
        return Case(f"sweep-{label}", "sweep", ["sweep", "{d}/spec.yaml", *W, *extra],
                    {"spec.yaml": spec, "scen.yaml": scen, **(files or {})}, where=rf"burstgate sweep: {where}")

    return [
        case("not-mapping", "- 1\n", rf"{S}:1: "), case("empty", "", rf"{S}:1: "),
        case("unknown", base + "speed: 2\n", rf"{S}:5: speed: unknown key"),
        case("duplicate", base + "seeds: [2]\n", rf"{S}:5: .*seeds"),
        case("no-scenario", "seeds: [1]\n", rf"{S}:1: scenario: required"),
        case("scenario-missing", base.replace("scen.yaml", "none.yaml"), r".*/none\.yaml: "),
        case("scenario-folder", base.replace("scen.yaml", "sub"), r".*/sub: ", files={"sub/x": ""}),
        case("scenario-not-map", base, r".*/scen\.yaml:1: ", files={"scen.yaml": "- 1\n"}),
        case("scenario-non-utf8", base, r".*/scen\.yaml: not UTF-8", files={"scen.yaml": scen.encode().replace(b"victim", b"v\xffm")}),
        case("non-utf8", base.encode() + b"# \xff\n", rf"{S}: not UTF-8"),
        case("syntax", base + "grid: {a: [1\n", rf"{S}:\d+: not YAML"),
        case("deep", "scenario: scen.yaml\ngrid: " + "[" * 5000 + "]" * 5000 + "\n", rf"{S}:\d+: "),
        case("set-not-map", base.replace("set: {duration_ms: 2}", "set: [1]"), rf"{S}:2: set: expected a mapping"),
        case("set-bad-path", base.replace("duration_ms: 2", "dpu.nothing.x: 2"), rf"{S}:2: set\.dpu\.nothing\.x: "),
        case("grid-not-list", base + "grid: {dpu.threads: 2}\n", rf"{S}:5: grid\.dpu\.threads: expected a non-empty list"),
        case("grid-empty-list", base + "grid: {dpu.threads: []}\n", rf"{S}:5: grid\.dpu\.threads"),
        case("grid-bad-path", base + "grid: {tenants.ghost.queues: [1]}\n", rf"{S}:5: grid\.tenants\.ghost\.queues: "),
        case("grid-huge", base + "grid:\n" + "".join(f"  tenants.victim.workload.iodepth{'' if i == 0 else ''}: [1]\n" for i in range(0))
             + "".join(f"  {p}: [{', '.join(str(v) for v in range(1, 41))}]\n" for p in
                       ("dpu.threads", "dpu.queue_depth", "dpu.header_bytes", "seed", "window_us", "tenants.victim.queues")),
             rf"{S}:\d+: grid: "),
        case("seeds-neg", base.replace("seeds: [1]", "seeds: [-1]"), rf"{S}:3: seeds\[0\]: "),
        case("seeds-text", base.replace("seeds: [1]", "seeds: [x]"), rf"{S}:3: seeds\[0\]: "),
        case("seeds-dup", base.replace("seeds: [1]", "seeds: [1, 1]"), rf"{S}:3: seeds: a value is listed twice"),
        case("schedulers-bad", base.replace("[bios]", "[fair]"), rf"{S}:4: schedulers\[0\]: unknown"),
        case("engines-bad", base + "engines: [fpga]\n", rf"{S}:5: engines\[0\]: unknown"),
        case("plot-bad", base + "grid: {dpu.threads: [1]}\nplot: {metric: speed}\n", rf"{S}:6: plot\.metric: unknown"),
        case("plot-x", base + "grid: {dpu.threads: [1]}\nplot: {metric: iops, x: seed}\n", rf"{S}:6: plot\.x"),
        case("out-not-csv", base, r"--out .*: the table is written as CSV", extra=("--out", "{d}/t.txt")),
        case("out-folder", base, r"--out .*: ", extra=("--out", "{d}/t.csv"), files={"t.csv/x": ""}),
        case("out-under-file", base, r"--out .*: ", extra=("--out", "{d}/scen.yaml/t.csv")),
        case("plots-file", base + "grid: {dpu.threads: [1]}\nplot: {metric: iops}\n", r"--plots .*: ", extra=("--plots", "{d}/scen.yaml")),
        Case("sweep-workers-neg", "sweep", ["sweep", "{d}/spec.yaml", "--workers", "-1"], {"spec.yaml": base, "scen.yaml": scen},
             where=r"burstgate sweep: --workers: "),
        Case("sweep-sim-missing", "sweep", ["sweep", "{d}/spec.yaml", "--sim", "{d}/none"], {"spec.yaml": base, "scen.yaml": scen},
             where=r"burstgate sweep: --sim .*: not an executable"),
        Case("sweep-spec-missing", "sweep", ["sweep", "{d}/none.yaml"], {}, where=r"burstgate sweep: .*/none\.yaml: "),
    ]


def fleet_cases():
    trace = "".join(f"{d},R,{i * 4096},4096,{1000000 + i * 1000}\n" for i in range(20) for d in (1,))
    t = {"t.csv": trace}
    F = ["fleet", "{d}/t.csv", "--format", "alibaba", "--nodes", "1", "--out", "{d}/out", "--workers", "0", "--quiet"]
    T = r".*/t\.csv"
    C = r".*/c\.yaml"
    good_c = "1: {base: {iops: 100, mbps: 1}, burst: {iops: 200, mbps: 2}}\n"

    def tcase(label, text, where, extra=()):
        return Case(f"fleet-trace-{label}", "fleet", [*F, *extra], {"t.csv": text}, where=rf"burstgate fleet: {where}")

    def ccase(label, text, where):
        return Case(f"fleet-contracts-{label}", "fleet", [*F, "--contracts", "{d}/c.yaml"], {**t, "c.yaml": text},
                    where=rf"burstgate fleet: {where}")

    cases = [
        tcase("fields", trace + "1,R,0,4096\n", rf"{T}:21: "), tcase("op", trace + "1,X,0,4096,99999999\n", rf"{T}:21: opcode"),
        tcase("len-neg", trace + "1,R,0,-4096,99999999\n", rf"{T}:21: "), tcase("len-0", trace + "1,R,0,0,99999999\n", rf"{T}:21: "),
        tcase("len-huge", trace + "1,R,0,16777216,99999999\n", rf"{T}:21: "),
        tcase("time-neg", trace + "1,R,0,4096,-5\n", rf"{T}:21: "), tcase("dev-neg", trace + "-1,R,0,4096,99999999\n", rf"{T}:21: "),
        tcase("offset-neg", trace + "1,R,-4096,4096,99999999\n", rf"{T}:21: "),
        tcase("backwards", trace + "1,R,0,4096,5\n", rf"{T}:21: "), tcase("text", trace + "1,R,0,4k,99999999\n", rf"{T}:21: "),
        tcase("nul", trace + "1,R,0,40\x0096,99999999\n", rf"{T}:21: "),
        tcase("long-line", trace + "1,R,0,4096," + "9" * (8 << 20) + "\n", rf"{T}:21: "),
        tcase("empty", "", rf"{T}: no records"), tcase("non-utf8", trace.encode() + b"\xff,R\n", rf"{T}:21: not UTF-8"),
        Case("fleet-trace-gzip", "fleet", F, {"t.csv": gzip.compress(trace.encode())}, where=rf"burstgate fleet: {T}: gzip"),
        Case("fleet-trace-folder", "fleet", F, {"t.csv/x": ""}, where=rf"burstgate fleet: {T}: "),
        Case("fleet-trace-dev-zero", "fleet", ["fleet", "/dev/zero", *F[2:]], {}, where=r"burstgate fleet: /dev/zero:1: ", timeout=30),
        Case("fleet-tencent-size-neg", "fleet", [*F[:3], "tencent", *F[4:]], {"t.csv": "1538323200,8,-8,0,1\n"}, where=rf"burstgate fleet: {T}:1: "),
        ccase("duplicate", good_c + good_c, rf"{C}:2: "), ccase("nan", good_c.replace("100", ".nan"), rf"{C}:1: "),
        ccase("inf", good_c.replace("100", ".inf"), rf"{C}:1: "), ccase("neg", good_c.replace("100", "-1"), rf"{C}:1: "),
        ccase("huge", good_c.replace("100", "1e300"), rf"{C}:1: "), ccase("burst-below", good_c.replace("200", "50"), rf"{C}:1: "),
        ccase("missing-device", "2: {base: {iops: 1, mbps: 1}}\n", rf"{C}: no contract for device"),
        ccase("not-map", "- 1\n", rf"{C}:1: "), ccase("non-utf8", good_c.encode() + b"#\xff\n", rf"{C}: not UTF-8"),
        ccase("unknown-part", "1: {base: {iops: 1, mbps: 1}, peak: {iops: 1, mbps: 1}}\n", rf"{C}:1: "),
        Case("fleet-nodes-0", "fleet", [*F[:5], "0", *F[6:]], t, where=r"burstgate fleet: --nodes: "),
        Case("fleet-nodes-huge", "fleet", [*F[:5], "1000000000", *F[6:]], t, where=r"burstgate fleet: --nodes: ", timeout=30),
        Case("fleet-seed-neg", "fleet", [*F, "--seed", "-1"], t, where=r"burstgate fleet: --seed: "),
        Case("fleet-time-scale-nan", "fleet", [*F, "--time-scale", "nan"], t, where=r"burstgate fleet: --time-scale: "),
        Case("fleet-slo-0", "fleet", [*F, "--slo-period-ms", "0"], t, where=r"burstgate fleet: --slo-period-ms: "),
        Case("fleet-schedulers", "fleet", [*F, "--schedulers", "bios,fair"], t, where=r"burstgate fleet: --schedulers: "),
        Case("fleet-template-missing", "fleet", [*F, "--template", "{d}/none.yaml"], t, where=r"burstgate fleet: .*/none\.yaml: "),
        Case("fleet-template-no-dpu", "fleet", [*F, "--template", "{d}/tp.yaml"], {**t, "tp.yaml": "seed: 1\n"},
             where=r"burstgate fleet: .*/tp\.yaml:1: "),
        Case("fleet-template-dup", "fleet", [*F, "--template", "{d}/tp.yaml"], {**t, "tp.yaml": "seed: 1\nseed: 2\ndpu: {}\n"},
             where=r"burstgate fleet: .*/tp\.yaml:2: "),
        Case("fleet-out-file", "fleet", [*F[:6], "--out", "{d}/t.csv", *F[8:]], t, where=r"burstgate fleet: --out .*: exists"),
        Case("fleet-format", "fleet", [*F[:3], "msr", *F[4:]], t, where=r"usage: burstgate fleet"),
    ]
    return cases


def gen_trace_cases():
    G = ["gen-trace", "--out", "{d}/t.csv"]
    return [
        Case("gen-devices-0", "gen-trace", [*G, "--devices", "0"], {}, where=r"burstgate gen-trace: --devices: "),
        Case("gen-devices-huge", "gen-trace", [*G, "--devices", "10000000"], {}, where=r"burstgate gen-trace: --devices: "),
        Case("gen-duration-nan", "gen-trace", [*G, "--duration-s", "nan"], {}, where=r"usage: burstgate gen-trace"),
        Case("gen-duration-0", "gen-trace", [*G, "--duration-s", "0"], {}, where=r"usage: burstgate gen-trace"),
        Case("gen-iops-inf", "gen-trace", [*G, "--base-iops", "inf"], {}, where=r"usage: burstgate gen-trace"),
        Case("gen-seed-neg", "gen-trace", [*G, "--seed", "-1"], {}, where=r"burstgate gen-trace: --seed: "),
        Case("gen-out-folder", "gen-trace", ["gen-trace", "--out", "{d}"], {}, where=r"burstgate gen-trace: --out .*: is a folder"),
        Case("gen-out-under-file", "gen-trace", ["gen-trace", "--out", "{d}/f/t.csv"], {"f": "x"}, where=r"burstgate gen-trace: --out "),
        Case("gen-no-out", "gen-trace", ["gen-trace"], {}, where=r"usage: burstgate gen-trace"),
        Case("gen-ok", "gen-trace", [*G, "--devices", "2", "--duration-s", "0.5"], {}, "ok",
             check=lambda d: (d / "t.csv").read_text().count("\n") > 0 or (_ for _ in ()).throw(AssertionError("empty"))),
    ]


def calibrate_cases():
    # Every one is refused before the gateway or fio starts (a measured case is
    # tests/gateway/test_calibration.py's).
    K = ["calibrate", "--out", "{d}/host.yaml"]
    return [
        Case("cal-no-out", "calibrate", ["calibrate"], {}, where=r"usage: burstgate calibrate"),
        Case("cal-out-folder", "calibrate", ["calibrate", "--out", "{d}"], {}, where=r"burstgate calibrate: --out .*: is a folder"),
        Case("cal-out-under-file", "calibrate", ["calibrate", "--out", "{d}/f/h.yaml"], {"f": "x"},
             where=r"burstgate calibrate: --out .*/f/h\.yaml: File exists"),
        Case("cal-threads-0", "calibrate", [*K, "--threads", "0"], {}, where=r"burstgate calibrate: --threads 0: must be 1\.\.16"),
        Case("cal-threads-17", "calibrate", [*K, "--threads", "17"], {}, where=r"burstgate calibrate: --threads 17: "),
        Case("cal-threads-text", "calibrate", [*K, "--threads", "two"], {}, where=r"usage: burstgate calibrate"),
        Case("cal-seconds-0", "calibrate", [*K, "--seconds", "0"], {}, where=r"burstgate calibrate: --seconds 0\.0: "),
        Case("cal-seconds-nan", "calibrate", [*K, "--seconds", "nan"], {}, where=r"burstgate calibrate: --seconds nan: "),
        Case("cal-seconds-inf", "calibrate", [*K, "--seconds", "inf"], {}, where=r"burstgate calibrate: --seconds inf: "),
        Case("cal-repeat-0", "calibrate", [*K, "--repeat", "0"], {}, where=r"burstgate calibrate: --repeat 0: "),
        Case("cal-iodepth-huge", "calibrate", [*K, "--iodepth", "100000"], {}, where=r"burstgate calibrate: --iodepth 100000: "),
        Case("cal-numjobs-neg", "calibrate", [*K, "--numjobs", "-1"], {}, where=r"burstgate calibrate: --numjobs -1: "),
        Case("cal-data-dir-missing", "calibrate", [*K, "--data-dir", "{d}/none"], {},
             where=r"burstgate calibrate: --data-dir .*/none: not a directory"),
        Case("cal-data-dir-file", "calibrate", [*K, "--data-dir", "{d}/f"], {"f": "x"},
             where=r"burstgate calibrate: --data-dir .*/f: not a directory"),
        Case("cal-build-empty", "calibrate", [*K, "--build", "{d}"], {}, where=r"burstgate calibrate: .*burstgate-gateway not found"),
    ]


def misc_python_cases():
    return [
        Case("rtl-unknown-block", "rtl", ["rtl", "--out", "{d}/v", "nope"], {}, where=r"burstgate rtl: unknown block 'nope'"),
        Case("rtl-tenants-text", "rtl", ["rtl", "--out", "{d}/v", "--tenants", "x"], {}, where=r"usage: burstgate rtl"),
        Case("rtl-tenants-neg", "rtl", ["rtl", "--out", "{d}/v", "--tenants", "-4", "bg_core"], {}, where=r"burstgate rtl: "),
        Case("rtl-out-file", "rtl", ["rtl", "--out", "{d}/f", "bg_core"], {"f": "x"}, where=r"burstgate rtl: .*f: "),
        Case("rtl-no-out", "rtl", ["rtl"], {}, where=r"usage: burstgate rtl"),
        Case("regs-both", "regs", ["regs", "--check", "--write"], {}, where=r"burstgate regs: --check and --write"),
        Case("regs-missing-root", "regs", ["regs", "--check", "{d}/none"], {}, where=r"burstgate regs: .*/none: no such folder"),
        Case("top-unknown", "burstgate", ["frobnicate"], {}, where=r"usage: burstgate"),
        Case("top-none", "burstgate", [], {}, where=r"usage: burstgate"),
        Case("top-sim-dispatch", "burstgate", ["sim", "{d}/none.yaml"], {}, where=r"burstgate-sim: .*/none\.yaml: cannot open"),
        Case("top-cost-dispatch", "burstgate", ["cost", "--random", "x"], {}, where=r"burstgate-cost: --random: "),
    ]


C_PROGRAMS = {SIM: "sw/sim/burstgate-sim", HOST: "sw/tools/burstgate-host", GATEWAY: "sw/gateway/burstgate-gateway",
              COST: "sw/tools/burstgate-cost", LSM: "sw/lsm/tools/burstgate-lsm", "replay": "sw/tools/burstgate-host"}


def all_cases():
    cases = (scenario_cases() + trace_scenario_cases() + valid_edge_cases() + sim_cli_cases() + profile_cases()
             + trace2iolog_cases() + replay_cases() + gateway_cases() + cost_cases() + lsm_cases() + plot_cases()
             + compare_cases() + fit_alpha_cases() + sweep_cases() + fleet_cases() + gen_trace_cases() + calibrate_cases() + misc_python_cases())
    ids = [c.id for c in cases]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, dup
    return cases


# ---- the long, randomized variant -----------------------------------------------------------

def mutations(seed, count):
    """Byte-wise mutations of valid inputs (a scenario, each trace format, a mix): (id, program
    key, argv, files). Each must end in exit 0 or 2, never a crash, a traceback or a timeout."""
    rng = random.Random(seed)
    seeds = [("scenario", SIM, ["{d}/f", "--quiet", "--out", "{d}/r.json"], Yaml(base_scenario()).text().encode())]
    for fmt, (head, recs, _) in FORMATS.items():
        seeds.append((f"trace-{fmt}", HOST, ["trace2iolog", "--trace", "{d}/f", "--format", fmt, "--out-dir", "{d}/o"],
                      (head + "\n".join(recs) + "\n").encode()))
    seeds.append(("mix", COST, ["--mix", "{d}/f"], b"A read 4k 0.5\nB write 64k 0.5\n"))
    out = []
    for i in range(count):
        name, prog, argv, data = seeds[i % len(seeds)]
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            pos = rng.randrange(len(b) + 1)
            if op < 0.35 and b:
                b[min(pos, len(b) - 1)] = rng.randrange(256)
            elif op < 0.6:
                b[pos:pos] = bytes([rng.choice(b"-0123456789.:,{}[]\n\t #&*!'\"e") ])
            elif op < 0.8 and b:
                del b[pos:pos + rng.randint(1, 8)]
            else:
                b[pos:pos] = b[rng.randrange(len(b)):][: rng.randint(1, 40)]
        out.append((f"mut-{name}-{i}", prog, argv, bytes(b)))
    return out
