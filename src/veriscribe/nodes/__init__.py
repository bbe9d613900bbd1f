"""The graphs' nodes: thin LangGraph adapters over the algorithms, checks and models."""
