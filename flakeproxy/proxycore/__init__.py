"""The proxy side of a run: which fault fires per request (injector), what the proxy writes down (journal), with
secrets out (redact), and whether an attack reached the model (delivery)."""
