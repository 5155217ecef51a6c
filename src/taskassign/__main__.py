from taskassign.cli import main

main()
