"""What taskassign learns from a running Kafka Streams application: the text its topology prints
(``topology_text``) and, elsewhere in this package, what a live cluster says about it."""
