"""The library: the `Index` facade, updating, searching, the vault walk and note access."""
