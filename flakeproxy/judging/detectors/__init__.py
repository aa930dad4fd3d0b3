"""Offline judges the invariants use: PII, refusals, similarity, prompt leaks. No network, no model download."""
