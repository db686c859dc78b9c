"""Summaries for returning readers: the resume brief and the status summary."""
