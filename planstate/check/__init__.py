"""Drift checks: every finding about a workspace, the safe fixes, and the watcher that re-checks on every change."""
