"""`burstgate sweep SPEC.yaml`: a scenario template × a parameter grid × seeds × schedulers × engines,
each combination one burstgate-sim run, as tasks on Dask distributed (docs/distributed.md).

The spec (keys below; paths in it are relative to the spec's folder)::

    scenario: ../scenarios/example.yaml      # the template (required)
    set: {duration_ms: 200}                  # fixed overrides, dotted paths (optional)
    grid:                                    # dotted path -> list of values (optional)
      tenants.bursty.workload.iodepth: [8, 64]
      dpu.threads: [1, 2]
    seeds: [1, 2]                            # default: the template's seed
    schedulers: [bios, wild]                 # default: the template's scheduler
    engines: [model]                         # default: model
    plot: {metric: lat_us.p99, x: tenants.bursty.workload.iodepth, tenant: victim}

A dotted path walks the scenario's mappings by key and its lists by index or by an element's
``name`` (``tenants.victim.workload.iodepth``). Tasks are numbered in the order grid (first key
slowest) × seeds × schedulers × engines; the table has one row per (task, tenant) in that order and
the report's tenant order, so it is the same bytes whatever the number of workers. A task that
fails (burstgate-sim's exit status and message, or a lost worker) has one row with status
``failed`` and its error, and the sweep exits 1 after listing each failed task's parameters.
"""

import csv
import io
import itertools
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import yaml

from burstgate.tools.engine import Failure, run_tasks
from burstgate.tools.reports import InputError, output_file, output_folder, read_text

SPEC_KEYS = ("scenario", "set", "grid", "seeds", "schedulers", "engines", "plot")
SCHEDULERS = ("bios", "wild", "base", "dualbucket")
ENGINES = ("model", "verilator", "xrt")
LAT = ("avg", "p50", "p90", "p99", "p999", "max", "count")
TENANT_FIELDS = ("iops", "mbps", *(f"lat_us.{k}" for k in LAT), "throttled", "deferred_ios", "generated", "finished")
UTIL = ("cpu", "ingress", "egress", "swlimit")
MAX_TASKS = 10000


# ---- the spec ------------------------------------------------------------------------------

class _Lines:
    """Line numbers of a YAML document's mapping keys, by path of keys (for located errors)."""

    def __init__(self, text):
        self.lines = {}
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError:
            node = None
        if node is not None:
            self._walk(node, ())

    def _walk(self, node, path):
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                self.lines[path + (str(k.value),)] = k.start_mark.line + 1
                self._walk(v, path + (str(k.value),))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                self._walk(v, path + (i,))

    def __call__(self, *path):
        while path and path not in self.lines:
            path = path[:-1]
        return self.lines.get(path, 1)


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML keeps the last of a key given twice in a mapping; a file that does so would run with
    one of the two values without a word, so it is refused (as burstgate-sim refuses it)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                twice = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: SafeLoader's own error names it
                break
            if twice:
                raise yaml.constructor.ConstructorError(None, None, f"key {key!r} given twice in one mapping",
                                                        key_node.start_mark)
        return super().construct_mapping(node, deep)


def load_yaml(path):
    """(data, lines) of a YAML file; InputError with the line for a syntax error or a key given twice."""
    text = read_text(path)
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 -- a SafeLoader
        lines = _Lines(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        raise InputError(f"{path}:{line}: not YAML ({getattr(exc, 'problem', None) or exc})") from None
    except RecursionError:
        raise InputError(f"{path}:1: nested too deeply") from None
    return data, lines


def _walk_path(doc, dotted):
    """(container, key) the dotted path ends in; ValueError naming the step that does not exist."""
    parts = dotted.split(".")
    cur = doc
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        where = ".".join(parts[:depth]) or "the scenario"
        if isinstance(cur, dict):
            if last:
                return cur, part
            if part not in cur:
                raise ValueError(f"{where} has no key '{part}'")
            cur = cur[part]
        elif isinstance(cur, list):
            if part.isdigit():
                idx = int(part)
                if idx >= len(cur):
                    raise ValueError(f"{where} has {len(cur)} elements, no index {idx}")
            else:
                idx = next((i for i, e in enumerate(cur) if isinstance(e, dict) and e.get("name") == part), None)
                if idx is None:
                    raise ValueError(f"{where} has no element named '{part}'")
            if last:
                return cur, idx
            cur = cur[idx]
        else:
            raise ValueError(f"{where} is a value, not a mapping or a list")
    raise ValueError("empty path")


def set_path(doc, dotted, value):
    container, key = _walk_path(doc, dotted)
    container[key] = value


def _absolute_traces(doc, folder):
    """Trace files are relative to the scenario's folder; the generated scenario lives elsewhere."""
    for t in doc.get("tenants") or []:
        tr = ((t or {}).get("workload") or {}).get("trace") if isinstance(t, dict) else None
        if isinstance(tr, dict) and isinstance(tr.get("file"), str) and not os.path.isabs(tr["file"]):
            tr["file"] = str((folder / tr["file"]).resolve())


def _list_of(spec, key, lines, path, allowed=None, kind=None):
    value = spec.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise InputError(f"{path}:{lines(key)}: {key}: expected a non-empty list")
    for i, v in enumerate(value):
        if kind is int and (isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**32):
            raise InputError(f"{path}:{lines(key, i)}: {key}[{i}]: expected a seed in 0..2^32-1, got {v!r}")
        if allowed and v not in allowed:
            raise InputError(f"{path}:{lines(key, i)}: {key}[{i}]: unknown '{v}' ({' | '.join(allowed)})")
    if len(set(map(str, value))) != len(value):
        raise InputError(f"{path}:{lines(key)}: {key}: a value is listed twice")
    return value


class Spec:
    """A validated sweep spec: the template, the grid and the task list."""

    def __init__(self, path):
        self.path = pathlib.Path(path)
        spec, lines = load_yaml(self.path)
        if not isinstance(spec, dict):
            raise InputError(f"{path}:1: a sweep spec is a mapping (keys: {', '.join(SPEC_KEYS)})")
        for key in spec:
            if key not in SPEC_KEYS:
                raise InputError(f"{path}:{lines(key)}: {key}: unknown key ({', '.join(SPEC_KEYS)})")
        if not isinstance(spec.get("scenario"), str):
            raise InputError(f"{path}:{lines('scenario')}: scenario: required, the template scenario's path")
        self.template_path = (self.path.parent / spec["scenario"]).resolve()
        template, _ = load_yaml(self.template_path)
        if not isinstance(template, dict):
            raise InputError(f"{self.template_path}:1: not a scenario (a mapping is expected)")
        _absolute_traces(template, self.template_path.parent)
        for section in ("set", "grid"):
            if spec.get(section) is not None and not isinstance(spec[section], dict):
                raise InputError(f"{path}:{lines(section)}: {section}: expected a mapping of dotted paths")
        for key, value in (spec.get("set") or {}).items():
            try:
                set_path(template, str(key), value)
            except ValueError as exc:
                raise InputError(f"{path}:{lines('set', key)}: set.{key}: {exc}") from None
        self.template = template
        self.grid = []
        for key, values in (spec.get("grid") or {}).items():
            key = str(key)
            if not isinstance(values, list) or not values:
                raise InputError(f"{path}:{lines('grid', key)}: grid.{key}: expected a non-empty list of values")
            try:
                _walk_path(template, key)
            except ValueError as exc:
                raise InputError(f"{path}:{lines('grid', key)}: grid.{key}: {exc}") from None
            self.grid.append((key, values))
        self.seeds = _list_of(spec, "seeds", lines, path, kind=int) or [template.get("seed", 1)]
        self.schedulers = _list_of(spec, "schedulers", lines, path, SCHEDULERS) or [template.get("scheduler", "bios")]
        self.engines = _list_of(spec, "engines", lines, path, ENGINES) or ["model"]
        count = len(self.seeds) * len(self.schedulers) * len(self.engines)
        for _, values in self.grid:
            count *= len(values)
        if count > MAX_TASKS:
            raise InputError(f"{path}:{lines('grid')}: grid: {count} tasks, more than {MAX_TASKS} "
                             "(each holds its scenario in memory until the table is written): split the sweep")
        self.plot = spec.get("plot")
        if self.plot is not None:
            if not isinstance(self.plot, dict) or set(self.plot) - {"metric", "x", "tenant"} or "metric" not in self.plot:
                raise InputError(f"{path}:{lines('plot')}: plot: expected {{metric: FIELD, x: GRID_KEY, tenant: NAME}}")
            if self.plot["metric"] not in TENANT_FIELDS:
                raise InputError(f"{path}:{lines('plot', 'metric')}: plot.metric: unknown '{self.plot['metric']}' "
                                 f"({' | '.join(TENANT_FIELDS)})")
            if self.plot.get("x", self.grid[0][0] if self.grid else None) not in [k for k, _ in self.grid]:
                raise InputError(f"{path}:{lines('plot')}: plot.x: must be one of the grid's keys")

    def tasks(self):
        """[(params, scenario, engine, scheduler, seed)] in the table's order."""
        out = []
        keys = [k for k, _ in self.grid]
        for combo in itertools.product(*(v for _, v in self.grid)):
            scenario = json.loads(json.dumps(self.template))  # a deep copy of plain data
            for key, value in zip(keys, combo):
                set_path(scenario, key, value)
            for seed, sched, engine in itertools.product(self.seeds, self.schedulers, self.engines):
                out.append((dict(zip(keys, combo)), scenario, engine, sched, seed))
        return out


# ---- one task: one burstgate-sim run -------------------------------------------------------

def sim_path(explicit=None):
    if explicit:
        return str(explicit)
    from burstgate.command import SUBCOMMANDS, find_program
    return str(find_program(next(s for s in SUBCOMMANDS if s.name == "sim").program))


def run_sim(scenario, engine, scheduler, seed, sim=None, series=False, raw=False):
    """Run burstgate-sim on a scenario (a dict); the report (without hist_us; with ``raw``, the
    report file's text as written) and, with ``series``, the per-window CSV's text (or, when
``series`` is a function, what it returns given the CSV's path). Raises
    RuntimeError with the simulator's message."""
    sim = sim_path(sim)
    with tempfile.TemporaryDirectory(prefix="bg-sweep-") as tmp:
        spath = pathlib.Path(tmp) / "scenario.yaml"
        spath.write_text(yaml.safe_dump(scenario, sort_keys=False))
        out = pathlib.Path(tmp) / "report.json"
        cmd = [sim, str(spath), "--engine", engine, "--scheduler", scheduler, "--seed", str(seed),
               "--out", str(out), "--quiet"]
        if series:
            cmd += ["--csv", str(pathlib.Path(tmp) / "series.csv")]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            msg = " / ".join(line for line in res.stderr.strip().splitlines()[-3:])
            raise RuntimeError(f"burstgate-sim exit {res.returncode}: {msg.replace(str(spath), 'scenario')}")
        report = out.read_text()
        if not raw:
            report = json.loads(report)
            for t in report.get("tenants", []):
                t.pop("hist_us", None)
        csv_path = pathlib.Path(tmp) / "series.csv"
        # A callable reads the series where it is (a long run's series need not fit in memory).
        csv_text = (series(csv_path) if callable(series) else csv_path.read_text()) if series else None
    return report, csv_text


def sweep_task(scenario, engine, scheduler, seed, sim=None):
    """A sweep task (runs on a worker): the report without histograms."""
    return run_sim(scenario, engine, scheduler, seed, sim)[0]


# ---- the table -----------------------------------------------------------------------------

def _get(d, dotted):
    for part in dotted.split("."):
        d = d.get(part) if isinstance(d, dict) else None
    return d


def _cell(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    return str(v)


def table(spec, tasks, results):
    """(header, rows) of the sweep's table, one row per (task, tenant), failures included."""
    keys = [k for k, _ in spec.grid]
    header = ["task", *keys, "seed", "scheduler", "engine", "status", "tenant", *TENANT_FIELDS,
              *(f"util.{u}" for u in UTIL), "error"]
    rows = []
    for i, ((params, _, engine, sched, seed), result) in enumerate(zip(tasks, results)):
        lead = [i, *(params[k] for k in keys), seed, sched, engine]
        if isinstance(result, Failure):
            rows.append([*lead, "failed", "", *([""] * len(TENANT_FIELDS)), *([""] * len(UTIL)), result.error])
            continue
        util = [(result.get("utilization") or {}).get(u) for u in UTIL]
        for t in result["tenants"]:
            rows.append([*lead, "ok", t["name"], *(_get(t, f) for f in TENANT_FIELDS), *util, ""])
    return header, [[_cell(v) for v in r] for r in rows]


def csv_text(header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def plot(spec, header, rows, out_dir):
    """PNG of plot.metric (mean over seeds) against plot.x, one line per scheduler × engine."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metric = spec.plot["metric"]
    x = spec.plot.get("x", spec.grid[0][0])
    tenant = spec.plot.get("tenant")
    col = {h: i for i, h in enumerate(header)}
    series = {}
    for r in rows:
        if r[col["status"]] != "ok" or (tenant and r[col["tenant"]] != tenant) or r[col[metric]] == "":
            continue
        line = f"{r[col['scheduler']]}/{r[col['engine']]}" + ("" if tenant else f" {r[col['tenant']]}")
        series.setdefault(line, {}).setdefault(r[col[x]], []).append(float(r[col[metric]]))
    order = [_cell(v) for v in dict(spec.grid)[x]]
    fig, ax = plt.subplots(figsize=(6, 4))
    for line, points in sorted(series.items()):
        xs = [v for v in order if v in points]
        ax.plot(range(len(xs)), [sum(points[v]) / len(points[v]) for v in xs], marker="o", label=line)
    ax.set_xticks(range(len(order)), order)
    ax.set_xlabel(x)
    ax.set_ylabel(metric + (f" ({tenant})" if tenant else ""))
    ax.set_title(f"{spec.path.stem}: {metric} (mean over {len(spec.seeds)} seed(s))")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    out_dir.mkdir(parents=True, exist_ok=True)
    png = out_dir / f"{spec.path.stem}-{metric.replace('.', '_')}-vs-{x.replace('.', '_')}.png"
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return png


# ---- the command ---------------------------------------------------------------------------

def add_engine_arguments(p):
    p.add_argument("--address", help="a running Dask scheduler (tcp://HOST:8786); default: an embedded local cluster")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes of the embedded cluster (default: one per core); 0: run the tasks "
                        "in this process, one after another")
    p.add_argument("--sim", help="burstgate-sim to run (default: the build's, found as `burstgate sim` finds it)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def add_arguments(p):
    p.add_argument("spec", help="the sweep spec (YAML; see docs/distributed.md)")
    p.add_argument("--out", help="the table (CSV); default: standard output")
    p.add_argument("--plots", help="folder for the spec's plot (PNG)")
    add_engine_arguments(p)


def check_engine_args(args):
    if args.workers is not None and args.workers < 0:
        raise InputError(f"--workers: expected 0 or more, got {args.workers}")
    if args.address is not None and args.workers is not None:
        raise InputError("--workers: not with --address (the cluster's workers run the tasks)")
    if args.sim and not (os.path.isfile(args.sim) and os.access(args.sim, os.X_OK)):
        raise InputError(f"--sim {args.sim}: not an executable file")
    if not args.sim and args.address is None:
        # On this machine's workers the build is this checkout's: say so now, not once per task.
        from burstgate.command import NotBuilt
        try:
            sim_path()
        except NotBuilt as exc:
            raise InputError(str(exc)) from None


def run(args):
    check_engine_args(args)
    spec = Spec(args.spec)
    if args.out and not args.out.endswith(".csv"):
        raise InputError(f"--out {args.out}: the table is written as CSV (name it .csv)")
    if args.out:
        output_file(args.out)
    if spec.plot and args.plots:
        output_folder(args.plots, "--plots")
    tasks = spec.tasks()
    results, info = run_tasks(sweep_task, [(s, e, sc, seed, args.sim) for _, s, e, sc, seed in tasks],
                           address=args.address, workers=args.workers, progress=not args.quiet)
    header, rows = table(spec, tasks, results)
    text = csv_text(header, rows)
    if args.out:
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    if spec.plot and args.plots:
        png = plot(spec, header, rows, pathlib.Path(args.plots))
        print(f"burstgate sweep: plot {png}", file=sys.stderr)
    failed = [(t, r) for t, r in zip(tasks, results) if isinstance(r, Failure)]
    if not args.quiet:
        print(f"burstgate sweep: {len(tasks)} tasks on {info['workers'] or 'no'} worker(s) "
              f"{'(in this process) ' if not info['workers'] else ''}in {info['tasks_s']:.2f} s "
              f"(+ {info['startup_s']:.2f} s starting the cluster)", file=sys.stderr)
    for (params, _, engine, sched, seed), r in failed:
        where = ", ".join(f"{k}={v!r}" for k, v in params.items())
        print(f"burstgate sweep: task failed ({where}{', ' if where else ''}seed={seed}, scheduler={sched}, "
              f"engine={engine}): {r.error}", file=sys.stderr)
    if failed:
        print(f"burstgate sweep: {len(failed)} of {len(tasks)} tasks failed", file=sys.stderr)
        return 1
    return 0
