"""Generated regions of STATE.md: what each shows, re-rendering them, `planstate render`'s report."""
