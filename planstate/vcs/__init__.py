"""Git as the distributed engine: snapshots, textconv, semantic diffs, the merge driver, install."""
