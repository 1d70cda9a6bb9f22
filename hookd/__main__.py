import sys

from hookd.cli.hookd_main import main

sys.exit(main(sys.argv[1:] or ["serve"]))
