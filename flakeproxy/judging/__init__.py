"""Judging: invariants over episodes into cells, verdicts, replicas and their statistics, the score, fault
coverage, and the offline detectors the invariants use (pure: no agent, no proxy)."""
