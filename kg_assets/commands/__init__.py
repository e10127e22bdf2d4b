"""The `kg` subcommands, one module each; each module's `register(subparsers)` adds its parser."""
