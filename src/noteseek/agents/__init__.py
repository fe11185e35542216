"""What agents get: the prompt context (search, gate, block), the hook protocol and the tool hooks."""
