"""The layer users call: `builder` / `DatasetBuilder` (`api.builder`), `data_source`
(`api.one_call`), and datasets opened by the path of their directory (`api.local`). It
composes the stages below (spec, download, prepare, read, interop) and holds no logic of its
own beyond choosing them."""
