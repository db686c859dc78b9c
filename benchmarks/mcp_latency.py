"""Time warm MCP tool calls (get, set, decision add) against the CLI process doing the same, and the cold start.

The server is the real `planstate mcp`, driven over stdio by the official MCP client; the CLI is the installed
console script started once per command. Cold start is spawn → initialize → first `get` answered. Calls of one
kind alternate between MCP and CLI so machine noise hits both alike. Targets (issue 13): a warm call at least 10x
faster than the CLI process, cold start to first answer under 1.5 s. Prints figures; asserts nothing.

    python benchmarks/mcp_latency.py [--runs 30] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

CALLS: dict[str, tuple[tuple[str, dict[str, Any]], list[str]]] = {
    "get": (("get", {"path": "title"}), ["get", "title"]),
    "set": (("set", {"values": {"next_action": "Benchmark {n}"}}), ["set", "next_action", "Benchmark {n}"]),
    "decision add": (
        ("decision", {"action": "add", "context": "Bench", "decision": "Decision {n}", "reason": "Timing"}),
        ["decision", "add", "--context", "Bench", "--decision", "Decision {n}", "--reason", "Timing"],
    ),
}


def planstate_command() -> list[str]:
    """The installed console script next to this Python, else `python -m planstate`."""
    script = Path(sys.executable).parent / "planstate"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "planstate"]


def filled(value: Any, n: int) -> Any:
    """`value` with `{n}` in its text replaced by the run number (each write changes something)."""
    if isinstance(value, str):
        return value.replace("{n}", str(n))
    if isinstance(value, dict):
        return {k: filled(v, n) for k, v in value.items()}
    if isinstance(value, list):
        return [filled(v, n) for v in value]
    return value


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50 and p99 of `samples` (seconds), in milliseconds."""
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return {"p50_ms": round(cuts[49] * 1000, 2), "p99_ms": round(cuts[98] * 1000, 2)}


async def measure(project: Path, runs: int, env: dict[str, str]) -> dict[str, Any]:
    """Start the server, time its cold start, then time each call kind warm, alternating with the CLI."""
    command = planstate_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "mcp"], cwd=str(project), env=env)
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        first = await session.call_tool("get", {"path": "title"})
        cold = time.perf_counter() - started
        assert not first.is_error, first.content
        for _ in range(3):  # warm the server's imports (the renderer, the templates)
            await session.call_tool("set", {"values": {"next_action": "Warm"}})
        out: dict[str, Any] = {"cold_start_to_first_answer_s": round(cold, 3), "runs": runs, "calls": {}}
        for name, ((tool, arguments), argv) in CALLS.items():
            mcp_times: list[float] = []
            cli_times: list[float] = []
            for n in range(runs):
                t = time.perf_counter()
                result = await session.call_tool(tool, filled(arguments, n))
                mcp_times.append(time.perf_counter() - t)
                assert not result.is_error, result.content
                t = time.perf_counter()
                done = subprocess.run(
                    [*command, *filled(argv, n + runs)], cwd=project, env=env, capture_output=True, check=False
                )
                cli_times.append(time.perf_counter() - t)
                assert done.returncode == 0, done.stderr
            mcp, cli = percentiles(mcp_times), percentiles(cli_times)
            out["calls"][name] = {"mcp": mcp, "cli": cli, "cli_over_mcp_p50": round(cli["p50_ms"] / mcp["p50_ms"], 1)}
        return out


def main() -> None:
    """Run the benchmark in a fresh workspace and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="calls of each kind (default 30)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANSTATE_")}
    env.update({"PLANSTATE_ACTOR": "bench", "NO_COLOR": "1"})
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        subprocess.run(
            [*planstate_command(), "init", "--title", "Bench", "--phase", "Build", "--phase", "Ship"],
            cwd=project,
            env=env,
            check=True,
            capture_output=True,
        )
        figures = asyncio.run(measure(project, args.runs, env))
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"cold start (spawn → initialize → first get answered): {figures['cold_start_to_first_answer_s']} s")
    print(f"warm calls, {figures['runs']} each      MCP p50 / p99        CLI p50 / p99        CLI/MCP p50")
    for name, f in figures["calls"].items():
        mcp, cli = f["mcp"], f["cli"]
        print(
            f"  {name:<14} {mcp['p50_ms']:>8.1f} / {mcp['p99_ms']:<8.1f} ms "
            f"{cli['p50_ms']:>8.1f} / {cli['p99_ms']:<8.1f} ms   {f['cli_over_mcp_p50']}x"
        )


if __name__ == "__main__":
    main()
