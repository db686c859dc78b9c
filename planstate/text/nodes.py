"""Stepping through a ruamel node tree by key or index, with each mapping's keys indexed once."""

from __future__ import annotations

from typing import Any, NamedTuple

from planstate.text.paths import Segment

MERGE_TAG = "tag:yaml.org,2002:merge"


class Step(NamedTuple):
    """A node on a resolved path, with how its parent holds it."""

    node: Any
    parent: Any  # MappingNode, SequenceNode or None for the root
    key: Any  # the key node in a mapping parent
    pos: int  # the position in a sequence parent (0 for mapping values)


def key_index(node: Any) -> dict[str, int]:
    """Where each key of a mapping node first appears in `node.value`."""
    index: dict[str, int] = {}
    for i, (key, _value) in enumerate(node.value):
        value = getattr(key, "value", None)
        if isinstance(value, str):  # only a string can equal a path segment's text
            index.setdefault(value, i)
    return index


class Children:
    """Child lookups in one parsed node tree: a mapping's keys are indexed on its first lookup, then O(1)."""

    def __init__(self) -> None:
        self._indexes: dict[int, tuple[Any, dict[str, int]]] = {}  # the node is kept so its id stays its own

    def step(self, node: Any, seg: Segment) -> Step | None:
        """Step into a node by key or index; None when it has no such child."""
        from ruamel.yaml.nodes import MappingNode, SequenceNode

        if isinstance(node, MappingNode):
            return self._by_key(node, str(seg))
        if isinstance(node, SequenceNode):
            return _by_index(node, seg)
        return None

    def _by_key(self, node: Any, key: str) -> Step | None:
        """The entry of a mapping node whose key is `key` (the first one, as ruamel's duplicate check allows)."""
        held = self._indexes.get(id(node))
        if held is None:
            held = self._indexes[id(node)] = (node, key_index(node))
        i = held[1].get(key)
        if i is None:
            return None
        key_node, value = node.value[i]
        return Step(value, node, key_node, 0)


def _by_index(node: Any, seg: Segment) -> Step | None:
    """The item of a sequence node at index `seg` (negative counts from the end)."""
    try:
        index = int(seg)
    except ValueError:
        return None
    if -len(node.value) <= index < len(node.value):
        index %= len(node.value)
        return Step(node.value[index], node, None, index)
    return None


def parent_step(root: Any, node: Any) -> Step | None:
    """Find the step (key or index in its parent) that holds `node`; None for the root."""

    def walk(cur: Any) -> Step | None:
        for step in child_steps(cur):
            if step.node is node:
                return step
            found = walk(step.node)
            if found:
                return found
        return None

    return None if node is root else walk(root)


def child_steps(node: Any) -> list[Step]:
    """Every child of a node, in order, as steps (none for a scalar)."""
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    if isinstance(node, MappingNode):
        return [Step(v, node, k, 0) for k, v in node.value]
    if isinstance(node, SequenceNode):
        return [Step(v, node, None, i) for i, v in enumerate(node.value)]
    return []
