"""Subcommands of the `kg` command line, each module exposing `register(subparsers)`."""
