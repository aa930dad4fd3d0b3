"""Planning: what a run will do, decided from the config alone: the episodes, the checks before a run, the
pillars of `flakeproxy ci`, the chaos profiles, and merging shards."""
