"""Measure the structure figures of issue 10: modules and lines, modules over 500 lines, radon blocks, lazy imports.

- modules / lines: every `.py` file under `planstate/` and their lines (docstring-only package `__init__.py`
  files are counted, and how many there are is said);
- modules over 500 lines, each named;
- radon (6.0.1) cyclomatic-complexity blocks ranked C or worse, as `radon cc -s -n C planstate | grep -c " - [C-F] "`
  counts them, and per 1,000 SLOC (`radon raw`'s SLOC);
- the share of `import` / `from ... import` statements that sit inside a function (at any depth), of all of them.

radon is optional: it is looked for as a module of this Python, then as `--radon PATH`, then on PATH; without it
the script says so and prints the rest.

    python benchmarks/structure_metrics.py [--radon /tmp/radonenv/bin/radon] [--json]
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parent.parent / "planstate"
LONG = 500
BAD_RANKS = "CDEF"


def modules(package: Path) -> list[Path]:
    """Every module file of the package, sorted."""
    return sorted(package.rglob("*.py"))


def line_count(path: Path) -> int:
    """The lines of a file."""
    return len(path.read_text(encoding="utf-8").splitlines())


def docstring_only(path: Path) -> bool:
    """Tell whether a module holds nothing but its docstring."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)


def imports(path: Path) -> tuple[int, int]:
    """(imports inside a function, all imports) of a module: Import/ImportFrom nodes with a function among their
    ancestors, and every Import/ImportFrom node."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside = total = 0

    def visit(node: ast.AST, in_function: bool) -> None:
        nonlocal inside, total
        if isinstance(node, ast.Import | ast.ImportFrom):
            total += 1
            inside += in_function
        nested = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for child in ast.iter_child_nodes(node):
            visit(child, nested)

    visit(tree, False)
    return inside, total


def radon_command(given: str | None) -> list[str] | None:
    """How to run radon: as a module of this Python, the given script, or the one on PATH (None: not found)."""
    if importlib.util.find_spec("radon") is not None:
        return [sys.executable, "-m", "radon"]
    if given:
        return [given]
    found = shutil.which("radon")
    return [found] if found else None


def radon_figures(command: list[str], package: Path) -> dict[str, Any]:
    """Blocks ranked C or worse (name, rank, complexity) and the total SLOC, from radon's JSON output."""
    cc = subprocess.run([*command, "cc", "-j", "-n", "C", str(package)], capture_output=True, text=True, check=True)
    raw = subprocess.run([*command, "raw", "-j", str(package)], capture_output=True, text=True, check=True)
    blocks = []
    for file, found in json.loads(cc.stdout).items():
        for block in found if isinstance(found, list) else []:
            if block["rank"] in BAD_RANKS:
                where = f"{Path(file).relative_to(package.parent)}:{block['lineno']}"
                blocks.append({"block": block["name"], "where": where, "complexity": block["complexity"]})
    blocks.sort(key=lambda b: -b["complexity"])
    sloc = sum(v["sloc"] for v in json.loads(raw.stdout).values() if isinstance(v, dict) and "sloc" in v)
    version = subprocess.run([*command, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    per_k = round(len(blocks) / sloc * 1000, 1) if sloc else None
    return {"version": version, "blocks": len(blocks), "sloc": sloc, "per_1k_sloc": per_k, "worst": blocks[:10]}


def measure(package: Path, radon: str | None) -> dict[str, Any]:
    """Every figure, as JSON-ready data (`radon` is None when radon is not installed)."""
    files = modules(package)
    lines = {str(p.relative_to(package.parent)): line_count(p) for p in files}
    inside = total = 0
    for path in files:
        a, b = imports(path)
        inside, total = inside + a, total + b
    command = radon_command(radon)
    return {
        "modules": len(files),
        "docstring_only_inits": sum(1 for p in files if p.name == "__init__.py" and docstring_only(p)),
        "lines": sum(lines.values()),
        "over_500": {name: n for name, n in sorted(lines.items(), key=lambda i: -i[1]) if n > LONG},
        "imports": {"inside_functions": inside, "all": total, "share": round(inside / total, 3) if total else None},
        "radon": radon_figures(command, package) if command else None,
    }


def report(figures: dict[str, Any]) -> str:
    """The figures as text."""
    out = [
        f"modules / lines: {figures['modules']} / {figures['lines']:,}"
        f" ({figures['docstring_only_inits']} of them docstring-only package __init__.py)",
        f"modules over {LONG} lines: {len(figures['over_500'])}",
        *(f"  {name}: {n}" for name, n in figures["over_500"].items()),
    ]
    imp = figures["imports"]
    out.append(f"imports inside functions: {imp['share']:.0%} ({imp['inside_functions']} of {imp['all']})")
    radon = figures["radon"]
    if radon is None:
        out.append("radon: not installed (pip install radon==6.0.1, or give --radon PATH); its figures are left out")
        return "\n".join(out)
    out.append(
        f"radon {radon['version']}: {radon['blocks']} blocks ranked C or worse,"
        f" {radon['per_1k_sloc']} per 1k SLOC ({radon['sloc']:,} SLOC)"
    )
    out.extend(f"  {b['complexity']:3} {b['block']} ({b['where']})" for b in radon["worst"])
    return "\n".join(out)


def main() -> int:
    """Parse arguments, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--radon", help="the radon script to run when radon is not a module of this Python")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = measure(PACKAGE, args.radon)
    print(json.dumps(figures, indent=2) if args.json else report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
