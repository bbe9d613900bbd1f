"""The nodes of the abstract graph: divide, summarise each facet, fall back, refine."""
