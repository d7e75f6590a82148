"""Reading prepared datasets: `DataSource` (`data_source`: the Sequence protocol over a split
spec), its row space (`rows`), record reads per process (`records`, through memory maps in
`mapped_shard`), decoding (`decoding`), the record formats it reads by name (`record_format`;
catalog's own in `catalog_format`, its ArrayRecord shards opened by `array_record`), and
`verify`. Split specs are resolved by `catalog.info.splits`."""
