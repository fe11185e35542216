"""Index storage: the only package that holds SQL. The engine talks to it through `storage.protocol.Storage`."""
