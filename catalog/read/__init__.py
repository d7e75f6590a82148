"""Reading prepared datasets: `DataSource` (the Sequence protocol over a split spec), the record
backends it reads shards through, split specs (`splits`), and batched reads through memory maps
(`mapped_shard`)."""
