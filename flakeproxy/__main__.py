from flakeproxy.cli.start import entry

entry()
