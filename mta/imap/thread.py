"""THREAD=ORDEREDSUBJECT and THREAD=REFERENCES (RFC 5256 4), and the
thread-list they answer with.

Both work on :class:`mta.imap.sort.Message`, read from the store's columns
(subject, sent_at, message_id, in_reply_to, references): no message is
parsed. The store keeps message ids without their angle brackets, the form
compared here. Messages of equal sent date go by sequence number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mta.imap.sort import Message, base_subject, casemap


@dataclass(eq=False, slots=True)
class Node:
    """A container of the REFERENCES algorithm: a message, or a dummy (None)."""

    message: Message | None = None
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)

    def adopt(self, child: Node) -> None:
        if child.parent is not None:
            child.parent.children.remove(child)
        child.parent = self
        self.children.append(child)

    def within(self, other: Node) -> bool:
        """Whether this node is ``other`` or below it (a walk up: a thread's
        depth, not its size; none at all when ``other`` has no children)."""
        if not other.children:
            return self is other
        node: Node | None = self
        while node is not None:
            if node is other:
                return True
            node = node.parent
        return False

    def first(self) -> Message:
        """The message a node sorts and is named by (a dummy: its first child's)."""
        node = self
        while node.message is None:
            node = node.children[0]
        return node.message


def _by_sent(node: Node) -> tuple[float, int]:
    m = node.message or node.first()
    return (m.sent, m.seq)


def ordered_subject(messages: Sequence[Message]) -> list[Node]:
    """RFC 5256 4, ORDEREDSUBJECT: grouped by base subject; in each group the
    earliest is the top and the others its children, in sent order; the
    threads in the order of their tops."""
    groups: dict[bytes, list[Message]] = {}
    for m in sorted(messages, key=lambda m: (m.sent, m.seq)):
        groups.setdefault(casemap(base_subject(m.subject)[0]), []).append(m)
    roots = []
    for members in groups.values():
        top = Node(members[0])
        for m in members[1:]:
            top.adopt(Node(m))
        roots.append(top)
    return sorted(roots, key=_by_sent)


def _references(m: Message) -> list[str]:
    """References, else the first id of In-Reply-To (RFC 5256 4, REFERENCES 1)."""
    refs = [r for r in m.references if r]
    if refs:
        return refs
    return [r for r in m.in_reply_to if r][:1]


def references(messages: Sequence[Message]) -> list[Node]:
    """RFC 5256 4, REFERENCES, steps 1 to 6."""
    by_id: dict[str, Node] = {}
    containers: list[Node] = []
    # (1) containers linked by References (or In-Reply-To).
    for m in sorted(messages, key=lambda m: m.seq):
        node = by_id.get(m.message_id) if m.message_id else None
        if node is None or node.message is not None:
            # No id, or one seen already: a container of its own (a unique id).
            node = Node(m)
            containers.append(node)
            if m.message_id and m.message_id not in by_id:
                by_id[m.message_id] = node
        else:
            node.message = m  # the dummy made for a reference becomes this message
        parent: Node | None = None
        for ref in _references(m):
            container = by_id.get(ref)
            if container is None:
                container = by_id[ref] = Node()
                containers.append(container)
            # (A) link consecutive references unless already linked or a loop.
            if parent is not None and container.parent is None and not parent.within(container):
                parent.adopt(container)
            parent = container
        # (B) the last reference is this message's parent (replacing any).
        if parent is not None and not parent.within(node):
            parent.adopt(node)
        elif parent is None and node.parent is not None:
            node.parent.children.remove(node)
            node.parent = None
    # (2) the root set.
    roots = [n for n in containers if n.parent is None]
    # (3) dummies pruned.
    roots = _prune(roots)
    # (4) the top level by sent date (a dummy by its children's first).
    for node in roots:
        if node.message is None:
            node.children.sort(key=_by_sent)
    roots.sort(key=_by_sent)
    # (5) threads of one base subject gathered.
    roots = _gather(roots)
    # (6) siblings by sent date, the deepest first.
    _sort_siblings(roots)
    roots.sort(key=_by_sent)
    return roots


def _prune(roots: list[Node]) -> list[Node]:
    """Step 3: dummies with no children go; below the top a dummy's children
    take its place, at the top only a lone child does. Children before their
    parents, without recursion (a reply chain may be thousands deep)."""
    order: list[Node] = []
    stack = list(roots)
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(node.children)
    for node in reversed(order):
        kept: list[Node] = []
        for child in node.children:
            if child.message is not None:
                kept.append(child)
                continue
            for grandchild in child.children:  # pruned already
                grandchild.parent = node
            kept.extend(child.children)
        node.children = kept
    out: list[Node] = []
    for node in roots:
        if node.message is None and len(node.children) == 1:
            node = node.children[0]
            node.parent = None
        if node.message is not None or node.children:
            out.append(node)
    return out


def _gather(roots: list[Node]) -> list[Node]:
    """Step 5: threads whose tops share a base subject become one."""
    table: dict[bytes, Node] = {}
    subjects: dict[int, tuple[bytes, bool]] = {}

    def subject(node: Node) -> tuple[bytes, bool]:
        # A node's subject is its first message's; a dummy made here keeps
        # the first child it was given, so each is worked out once.
        found = subjects.get(id(node))
        if found is None:
            text, marked = base_subject(node.first().subject)
            found = subjects[id(node)] = (casemap(text), marked)
        return found

    for node in roots:
        key, marked = subject(node)
        if not key:
            continue
        held = table.get(key)
        if (
            held is None
            or (node.message is None and held.message is not None)
            or (held.message is not None and subject(held)[1] and not marked)
        ):
            table[key] = node
    gone: set[int] = set()  # tops merged into another (deleted dummies)
    replaced: dict[int, Node] = {}  # a top -> the dummy now holding it
    for node in roots:
        if node.parent is not None or id(node) in gone:
            continue  # gathered under another top already
        key, marked = subject(node)
        held = table.get(key) if key else None
        if held is None or held is node:
            continue
        if held.message is None and node.message is None:
            for child in list(node.children):
                held.adopt(child)
            gone.add(id(node))
        elif held.message is None or (marked and not subject(held)[1]):
            held.adopt(node)
        else:
            dummy = Node()
            replaced[id(held)] = dummy
            dummy.adopt(held)
            dummy.adopt(node)
            table[key] = dummy
    out: dict[int, Node] = {}
    for node in roots:
        while id(node) in replaced:
            node = replaced[id(node)]
        if node.parent is None and id(node) not in gone:
            out.setdefault(id(node), node)
    return list(out.values())


def _sort_siblings(roots: list[Node]) -> None:
    """Every node's children by sent date. Dummies are only at the top, so no
    node's key depends on an order not yet settled: any traversal will do."""
    stack = list(roots)
    while stack:
        node = stack.pop()
        if len(node.children) > 1:
            node.children.sort(key=_by_sent)
        stack.extend(node.children)


ALGORITHMS: dict[str, Callable[[Sequence[Message]], list[Node]]] = {
    "ORDEREDSUBJECT": ordered_subject,
    "REFERENCES": references,
}


# -- the answer ---------------------------------------------------------------------


def thread_list(roots: Sequence[Node], number: Callable[[Message], int]) -> str:
    """RFC 5256 5's thread-list: ``(3 6 (4 23)(44 7 96))``, ``((3)(5))``. A
    chain of only children is one run of numbers, siblings each in their own
    parentheses; written without recursion (threads may be deep)."""
    parts: list[str] = []
    stack: list[Node | str] = []
    for root in reversed(roots):
        stack += [")", root, "("]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        node, first = item, True
        while True:
            if node.message is not None:
                parts.append(str(number(node.message)) if first else f" {number(node.message)}")
                first = False
            if len(node.children) == 1:
                node = node.children[0]
                continue
            if node.children:
                if not first:
                    parts.append(" ")
                for child in reversed(node.children):
                    stack += [")", child, "("]
            break
    return "".join(parts)
