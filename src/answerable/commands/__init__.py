"""The CLI commands, one module per command or command group; ``cli.py`` registers each
in one line. A module imports its library code inside the command, so ``--help`` and
the commands that only read a release stay light."""
