import sys

from fermion_spark.cli import main

sys.exit(main())
