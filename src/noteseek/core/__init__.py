"""Pure rules, values in and values out: no I/O, no globals (frontmatter, chunking, queries, language, fusion, budgets, the relevance gate, the context block)."""
