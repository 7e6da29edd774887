"""The ``hetlab`` commands, one module per command or family (``graph`` and ``zoo``;
``run`` with its ``--per-node`` and ``--adaptive`` modes), and the flags they share
(``options``). ``hetlab.cli`` dispatches to them; they compose every layer below."""
