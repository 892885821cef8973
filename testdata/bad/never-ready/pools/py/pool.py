# A pool that never says it is ready (it forgot to call nexus.serve).
import sys
import time

print("warming up the cache", file=sys.stderr)
time.sleep(3600)
