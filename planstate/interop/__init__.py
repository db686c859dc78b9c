"""Importers from other planning tools (GSD, Backlog.md, the workflow session files) and python-frontmatter interop."""
