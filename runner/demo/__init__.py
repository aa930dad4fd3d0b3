"""The bundled example world for `flakeproxy demo`: all on loopback, offline, deterministic."""
