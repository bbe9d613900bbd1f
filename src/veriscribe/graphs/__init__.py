"""Graph builders (abstract, cited QA, question sets) and the runner of their threads."""
