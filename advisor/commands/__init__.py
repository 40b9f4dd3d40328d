"""One module per `advisor` subcommand; each exposes register(subparsers)."""
