"""Preparation: a spec's downloads -> source readers -> features -> ArrayRecord shards.

``driver`` (lock, plan, run, verify, commit), ``shard_plan`` (units decided before writing),
``work_unit`` (one unit writes one shard), ``runners`` (serial or processes) and ``beam``
(Apache Beam work items), ``progress`` (bars and CI lines), ``options`` (`PrepareOptions`).
"""
