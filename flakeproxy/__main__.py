from flakeproxy.cli.main import main

main()
