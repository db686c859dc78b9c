"""Text: the front-matter envelope, YAML edits in place, field paths, plain data, templates."""
