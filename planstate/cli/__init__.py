"""The `planstate` command line: `main.py` dispatches, `errors.py` is the error boundary, `commands/` the commands."""
