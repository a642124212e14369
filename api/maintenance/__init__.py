"""The Spark maintenance worker: claims jobs from queue `maintenance` and runs them on one SparkSession."""
