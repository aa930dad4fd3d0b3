from flakeproxy.cli.main import entry

entry()
