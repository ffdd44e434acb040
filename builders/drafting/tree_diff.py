"""sqlglot's tree diff with the SQL of each distinct subtree written once per process.

The error types read sqlglot's diff (``sqlglot.diff``, its ChangeDistiller). That diff
pairs leaves, and then inner nodes, partly by the dice coefficient of the bigrams of their
SQL text, and it writes each node's SQL anew in every diff, from a deep copy of the node.
Candidate SQL diffs thousands of trees that share most of their parts: a perturbation is
a copy of its gold with one change, an item's gold is diffed against each of its
perturbations, and the items of one template share their columns and tables. So
:class:`TreeDiff` runs the same ChangeDistiller but keeps, per process, the text, the
bigrams and the coefficient of each *content*, and the edits are sqlglot's, node for node.

Why that is exact: sqlglot writes a node's SQL from ``node.copy()``, and a copy carries
only the node's class, its arguments (down the whole subtree), comments, type and
metadata. A content id (:class:`Contents`) stands for exactly those (the metadata without
the source position, which no generator reads; an argument only when it is a string,
int, bool, enum or None, compared with its type), so two nodes of one content id have
one text. A node whose content cannot be keyed so is written as sqlglot does. The one
generator state that outlives a write, the names it makes up for a table alias without a
name (``_t0``, ``_t1``...), depends on the order of writes: a tree holding such an alias
is diffed by sqlglot itself.
"""

from __future__ import annotations

from enum import Enum
from itertools import chain

from sqlglot import diff, exp
from sqlglot.diff import ChangeDistiller

POSITION = frozenset(("line", "col", "start", "end"))
"""Metadata keys that say where a node was parsed from; sqlglot's generator reads none."""

PLAIN = (str, int, bool, type(None), Enum)
"""Argument values a content id holds (with their type): equal ones write equal SQL."""

LIMIT = 20_000
"""Content ids and coefficients a process keeps; past that the memo starts again. About
850 bytes each (bigrams and SQL included): some 17 MB. A ten times larger memo saved 2% of
candidate SQL's perturbations at quota 200."""


class Contents:
    """Content ids and what is kept per content: the diff's bigrams, coefficients and the
    SQL ``node.sql()`` writes."""

    def __init__(self) -> None:
        self.ids: dict[tuple, int] = {}
        self.bigrams: dict[int, dict[str, int]] = {}
        self.dice: dict[tuple[int, int], float] = {}
        self.sql: dict[int, str] = {}

    def size(self) -> int:
        return len(self.ids) + len(self.dice)

    def of(self, node: exp.Expr, seen: dict[int, int | None]) -> int | None:
        """The content id of ``node`` (memoized in ``seen`` by node), or None when some
        part of it cannot be keyed."""
        known = seen.get(id(node), 0)
        if known != 0:
            return known
        try:
            meta = node._meta
            key = (
                type(node),
                tuple((name, self._value(value, seen)) for name, value in node.args.items()),
                tuple(node.comments) if node.comments else None,
                None if node._type is None else self._value(node._type, seen),
                tuple(sorted((k, v) for k, v in meta.items() if k not in POSITION))
                if meta
                else None,
            )
            found = self.ids.get(key)
        except TypeError:  # an argument of another kind, or unhashable metadata
            found = None
        else:
            if found is None:
                found = self.ids[key] = len(self.ids) + 1
        seen[id(node)] = found
        return found

    def _value(self, value, seen) -> tuple:
        if isinstance(value, exp.Expr):
            found = self.of(value, seen)
            if found is None:
                raise TypeError("a part without a content id")
            return (exp.Expr, found)
        if type(value) is list:
            return (list, tuple(self._value(v, seen) for v in value))
        if not isinstance(value, PLAIN):
            raise TypeError("an argument that is not a plain value")
        return (type(value), value)


_contents = Contents()


def contents() -> Contents:
    """This process's :class:`Contents`, started again once it holds :data:`LIMIT`."""
    global _contents
    if _contents.size() > LIMIT:
        _contents = Contents()
    return _contents


class _Distiller(ChangeDistiller):
    """sqlglot's ChangeDistiller, its dice coefficients kept per pair of contents."""

    def __init__(self, known: Contents, seen: dict[int, int | None]) -> None:
        super().__init__()
        self._known = known
        self._seen = seen

    def _dice_coefficient(self, source: exp.Expr, target: exp.Expr) -> float:
        known = self._known
        pair = (known.of(source, self._seen), known.of(target, self._seen))
        if pair[0] is None or pair[1] is None:
            return super()._dice_coefficient(source, target)
        found = known.dice.get(pair)
        if found is not None:
            return found
        source_histo = self._bigrams(pair[0], source)
        target_histo = self._bigrams(pair[1], target)
        # from here on as sqlglot computes it, so the float is the same
        total_grams = sum(source_histo.values()) + sum(target_histo.values())
        if not total_grams:
            return 1.0 if source == target else 0.0  # equality is not by content: not kept
        overlap_len = 0
        for gram in set(source_histo) & set(target_histo):
            overlap_len += min(source_histo[gram], target_histo[gram])
        found = known.dice[pair] = 2 * overlap_len / total_grams
        return found

    def _bigrams(self, content: int, node: exp.Expr) -> dict[str, int]:
        found = self._known.bigrams.get(content)
        if found is None:
            found = self._known.bigrams[content] = self._bigram_histo(node)
        return found


class TreeDiff:
    """The edits from ``source`` to ``target``: ``sqlglot.diff(source, target,
    delta_only=True)``, the same edits of the same nodes in the same order, with
    :meth:`sql` for the SQL of their nodes."""

    def __init__(self, source: exp.Expr, target: exp.Expr) -> None:
        self._known = contents()
        self._seen: dict[int, int | None] = {}
        self.edits = self._diff(source, target)

    def _diff(self, source: exp.Expr, target: exp.Expr) -> list:
        # as sqlglot.diff does it, with the distiller that keeps what it wrote
        source_nodes, target_nodes = tuple(source.walk()), tuple(target.walk())
        if any(_made_up_name(n) for n in chain(source_nodes, target_nodes)):
            return diff(source, target, delta_only=True)
        source_ids = {id(n) for n in source_nodes}
        target_ids = {id(n) for n in target_nodes}
        copy = (
            len(source_nodes) != len(source_ids)
            or len(target_nodes) != len(target_ids)
            or source_ids & target_ids
        )
        if copy:  # shared nodes: the diff's parents would be wrong (sqlglot copies too)
            source, target = source.copy(), target.copy()
            source_nodes, target_nodes = tuple(source.walk()), tuple(target.walk())
        for node in chain(reversed(source_nodes), reversed(target_nodes)):
            node._hash = hash(node)
        try:
            distiller = _Distiller(self._known, self._seen)
            return distiller.diff(source, target, delta_only=True)
        finally:
            if not copy:
                for node in chain(source_nodes, target_nodes):
                    node._hash = None

    def sql(self, node: exp.Expr) -> str:
        """``node.sql()``, written once per content."""
        content = self._known.of(node, self._seen)
        if content is None:
            return node.sql()
        found = self._known.sql.get(content)
        if found is None:
            found = self._known.sql[content] = node.sql()
        return found


def _made_up_name(node: exp.Expr) -> bool:
    return isinstance(node, exp.TableAlias) and not node.this
