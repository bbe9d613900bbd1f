"""The nodes of the cited-QA graph: retrieve, answer, claims, verify, judge, recover, present."""
